// gw console: keeps the live part of a page fresh. An element with `data-live="N"` is
// fetched again every N seconds (the page's own URL with `part=live`: the server then
// renders that part alone) while the page is visible. No other script.
"use strict";
(function () {
  const live = document.querySelector("[data-live]");
  if (!live) return;
  const seconds = Math.max(1, Number(live.dataset.live) || 5);
  let busy = false;
  async function refresh() {
    if (busy || document.hidden) return;
    busy = true;
    try {
      const url = new URL(window.location.href);
      url.searchParams.set("part", "live");
      const response = await fetch(url, {
        credentials: "same-origin",
        cache: "no-store",
      });
      if (response.ok) {
        // The server escaped every value in this HTML (it is the same template the page
        // was rendered with).
        live.innerHTML = await response.text();
        live.dataset.updated = String(Date.now());
      }
    } catch (_) {
      // The control plane is restarting: try again at the next tick.
    } finally {
      busy = false;
    }
  }
  window.setInterval(refresh, seconds * 1000);
})();
