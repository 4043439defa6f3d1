"use strict";
// A button with data-print prints the page (the print stylesheet lays it out).
document.addEventListener("DOMContentLoaded", () => {
  for (const button of document.querySelectorAll("button[data-print]")) button.addEventListener("click", () => window.print());
});
