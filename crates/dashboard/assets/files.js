// The Files page's upload: a file dropped on the zone or chosen in its input is sent as the
// raw body of `PUT /account/files?filename=…&project=…` (XHR, for the progress bar), so
// the server streams it to storage as it arrives. The new object is private; when the form's
// settings were filled in, they are then posted to its page as its settings form would be
// (a password in a form body, never in a URL), else the list is shown with the new row.
// Without this script the form stays hidden and the page says how else to upload.
(function () {
  "use strict";
  var form = document.getElementById("upload-form");
  if (!form || !window.XMLHttpRequest) { return; }
  var zone = document.getElementById("drop-zone");
  var input = document.getElementById("file");
  var box = document.getElementById("upload-status");
  var label = document.getElementById("upload-label");
  var bar = document.getElementById("upload-progress");
  var text = document.getElementById("upload-text");
  var error = document.getElementById("upload-error");
  var project = form.getAttribute("data-project") || "";
  var busy = false;
  form.hidden = false;

  function size(n) {
    if (n < 1024) { return n + " B"; }
    if (n < 1048576) { return (n / 1024).toFixed(1) + " KiB"; }
    return (n / 1048576).toFixed(1) + " MiB";
  }

  function fail(message) {
    busy = false;
    input.disabled = false;
    zone.classList.remove("busy");
    error.textContent = message;
    error.hidden = false;
  }

  // Whether the form's settings say anything beyond the defaults (private, no limits).
  function settingsGiven() {
    var given = form.elements.access.value !== "private";
    ["title", "password", "allow", "expires_at", "max_views"].forEach(function (name) {
      if (form.elements[name].value.trim() !== "") { given = true; }
    });
    return given;
  }

  function send(file) {
    if (busy) { return; }
    error.hidden = true;
    // The server's cap, checked here first so a file over it is not sent at all; the server
    // checks it again (413).
    var maxBytes = Number(form.getAttribute("data-max-bytes")) || Infinity;
    if (file.size > maxBytes) {
      fail(file.name + " is " + size(file.size) + ": files may be at most " + size(maxBytes) + ". Nothing was uploaded.");
      return;
    }
    busy = true;
    input.disabled = true;
    zone.classList.add("busy");
    box.hidden = false;
    label.textContent = "Uploading " + file.name;
    bar.value = 0;
    text.textContent = "0 B of " + size(file.size);
    var xhr = new XMLHttpRequest();
    xhr.open("PUT", "/account/files?filename=" + encodeURIComponent(file.name) +
      "&project=" + encodeURIComponent(project));
    if (file.type) { xhr.setRequestHeader("Content-Type", file.type); }
    xhr.upload.onprogress = function (e) {
      if (e.lengthComputable && e.total > 0) {
        bar.value = Math.floor((e.loaded / e.total) * 100);
        text.textContent = size(e.loaded) + " of " + size(e.total);
      }
    };
    xhr.onload = function () {
      var body = null;
      try { body = JSON.parse(xhr.responseText); } catch (ignored) { body = null; }
      if (xhr.status === 201 && body) {
        bar.value = 100;
        label.textContent = "Uploaded " + file.name;
        text.textContent = "Uploaded " + body.title + " (" + size(body.sizeBytes) + ").";
        if (settingsGiven()) {
          text.textContent += " Saving its settings…";
          form.action = body.detail;
          form.submit();
        } else {
          window.location.assign(body.list);
        }
        return;
      }
      box.hidden = true;
      if (xhr.status === 413) {
        fail(file.name + " is too large: " + (body && body.message ? body.message : "over the server's limit") + ". Nothing was stored.");
      } else if (xhr.responseURL && xhr.responseURL.indexOf("/login") !== -1) {
        fail("Your session has ended: sign in again, then upload the file again.");
      } else if (body && body.message) {
        fail("The upload was refused: " + body.message);
      } else {
        fail("The upload failed (HTTP " + xhr.status + "). Try again.");
      }
    };
    xhr.onerror = function () {
      box.hidden = true;
      fail("The upload failed: the connection was lost. Try again.");
    };
    xhr.send(file);
  }

  input.addEventListener("change", function () {
    if (input.files && input.files.length > 0) { send(input.files[0]); }
  });
  form.addEventListener("submit", function (e) {
    e.preventDefault();
    if (input.files && input.files.length > 0) { send(input.files[0]); } else { input.focus(); }
  });
  ["dragenter", "dragover"].forEach(function (type) {
    zone.addEventListener(type, function (e) {
      e.preventDefault();
      if (!busy) { zone.classList.add("over"); }
    });
  });
  ["dragleave", "dragend"].forEach(function (type) {
    zone.addEventListener(type, function () { zone.classList.remove("over"); });
  });
  zone.addEventListener("drop", function (e) {
    e.preventDefault();
    zone.classList.remove("over");
    var files = e.dataTransfer ? e.dataTransfer.files : null;
    if (!files || files.length === 0) { return; }
    if (files.length > 1) {
      fail("Drop one file at a time: nothing was uploaded.");
      return;
    }
    send(files[0]);
  });
})();
