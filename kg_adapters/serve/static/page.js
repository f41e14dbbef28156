// The query page of `kga serve`: YASGUI (vendored, see yasgui/VENDORED.json) on this server's /sparql.
// `/?query=...` fills the editor and runs the query on load (YASGUI's populateFromUrl).
"use strict";
(function () {
  var endpoint = new URL("sparql", window.location.href).href;
  document.getElementById("endpoint").textContent = endpoint;
  // Only the autocompleter that works offline: the others ask prefix.cc and LOV on the network.
  Yasgui.Yasqe.defaults.autocompleters = ["variables"];
  window.yasgui = new Yasgui(document.getElementById("yasgui"), {
    requestConfig: { endpoint: endpoint, method: "POST" },
    copyEndpointOnNewTab: true,
    endpointCatalogueOptions: {
      getData: function () {
        return [{ endpoint: endpoint }];
      },
      keys: [],
    },
  });
})();
