// Copy buttons: a `<button data-copy="…" hidden>` copies its text to the clipboard and says
// so. The buttons stay hidden without this script (or without a clipboard: plain http off
// this machine); the text beside them can still be selected by hand.
(function () {
  "use strict";
  if (!navigator.clipboard) { return; }
  var status = document.createElement("p");
  status.className = "visually-hidden";
  status.setAttribute("role", "status");
  document.body.appendChild(status);
  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    var label = button.textContent;
    button.hidden = false;
    button.addEventListener("click", function () {
      navigator.clipboard.writeText(button.getAttribute("data-copy")).then(function () {
        button.setAttribute("data-copied", "");
        button.textContent = "Copied";
        status.textContent = "Copied to the clipboard";
        window.setTimeout(function () {
          button.removeAttribute("data-copied");
          button.textContent = label;
          status.textContent = "";
        }, 2000);
      });
    });
  });
})();
