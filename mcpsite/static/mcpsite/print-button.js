"use strict";
// A button with data-print prints the page (the print stylesheet lays it out). It is rendered disabled and enabled
// here, so a click made before this script has run is not silently lost.
document.addEventListener("DOMContentLoaded", () => {
  for (const button of document.querySelectorAll("button[data-print]")) {
    button.addEventListener("click", () => window.print());
    button.disabled = false;
  }
});
