"use strict";
// A button with data-copy="<id>" copies that field's value to the clipboard and says so in the status element
// after it (data-copied); where the clipboard is refused it selects the text instead (data-failed). The buttons are
// rendered disabled and enabled here, so a click made before this script has run is not silently lost.
document.addEventListener("DOMContentLoaded", () => {
  for (const button of document.querySelectorAll("button[data-copy]")) {
    const field = document.getElementById(button.dataset.copy);
    const status = button.nextElementSibling;
    button.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(field.value);
        status.textContent = button.dataset.copied;
      } catch {
        field.focus();
        field.select();
        status.textContent = button.dataset.failed;
      }
    });
    button.disabled = false;
  }
});
