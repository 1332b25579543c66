"""The control plane's HTTP admin and debug server (port 9091 when `START_STATS_SERVER` is
set): statuses, snapshots of every pipeline stage, connected proxies."""
