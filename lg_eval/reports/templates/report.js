(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("lg-data").textContent);
  var status = document.getElementById("filter-status");
  var tag = document.getElementById("filter-tag");
  var shown = document.getElementById("filter-shown");
  var rows = document.querySelectorAll("tr[data-row]");
  function apply() {
    var wantStatus = status.value;
    var wantTag = tag.value;
    var count = 0;
    for (var i = 0; i < rows.length; i++) {
      var row = data.rows[Number(rows[i].getAttribute("data-row"))];
      var keep = (!wantStatus || row.status === wantStatus) &&
        (!wantTag || row.tags.indexOf(wantTag) >= 0);
      rows[i].hidden = !keep;
      if (keep) { count++; }
    }
    shown.textContent = count + " of " + rows.length + " shown";
  }
  // A link may preselect the filters: report.html#status=failed&tag=refunds
  var wanted = new URLSearchParams(window.location.hash.slice(1));
  [[status, wanted.get("status")], [tag, wanted.get("tag")]].forEach(function (pair) {
    for (var i = 0; pair[1] !== null && i < pair[0].options.length; i++) {
      if (pair[0].options[i].value === pair[1]) { pair[0].selectedIndex = i; }
    }
  });
  status.addEventListener("change", apply);
  tag.addEventListener("change", apply);
  apply();
})();
