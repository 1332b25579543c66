"""Everything Kubernetes (the orchestrator): gw's resources read from a cluster and statuses
written back to it.

- `client`: connecting to the API server, what its failures look like (`API_ERRORS`,
  `status_code`), and the synchronous client `gwctl` uses;
- `kinds`: what is watched, and the client library's type for each kind;
- `store`: `OrchStore`, the cluster behind the same interface as `DirectoryStore`;
- `status`: the status writer (`status.statuses.<namespace>` through `/status`);
- `leader`: leader election with a Lease (only the leader writes statuses);
- `webhook`: the validation webhook's certificate; `admission`: its verdicts;
- `discovery`: `gw discovery --orch` (Upstream custom resources for service ports);
- `runner`: `gw controlplane --orch`.

The client library (lightkube) is used nowhere else. Nothing in the pipeline imports this
package: the translator, discovery and the stores know nothing of the cluster, and the
data-plane servers (extauth, rate limit) are configured over xDS.
"""
