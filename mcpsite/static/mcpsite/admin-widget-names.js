"use strict";
// Two of Django's admin widgets build markup that assistive technology cannot name, so each is mended where it
// appears (on load, and in inline rows added later):
// - the filter_horizontal selector's search icons (SelectFilter2.js) carry an aria-label on a plain span, which
//   ARIA ignores: as an image (role="img") the label names the icon, and with it the search box it labels;
// - the autocomplete widget's select2 box (role="combobox") and its value (role="textbox") are named only by the
//   value, so an empty box has no name: both are named by the field's own label, then the value.
(function () {
  function nameSearchIcons(root) {
    for (const icon of root.querySelectorAll(".selector .search-label-icon[aria-label]:not([role])")) {
      icon.setAttribute("role", "img");
    }
  }
  function labelId(select) {
    const label = select.id && document.querySelector(`label[for="${CSS.escape(select.id)}"]`);
    if (!label) return null;
    if (!label.id) label.id = `${select.id}_label`;
    return label.id;
  }
  function nameAutocompletes(root) {
    for (const select of root.querySelectorAll("select.admin-autocomplete")) {
      const box = select.nextElementSibling;
      const selection = box && box.querySelector(".select2-selection[role=combobox]");
      const value = selection && selection.querySelector(".select2-selection__rendered[id]");
      const label = selection && labelId(select);
      if (!label || selection.dataset.named) continue;
      selection.setAttribute("aria-labelledby", value ? `${label} ${value.id}` : label);
      if (value) value.setAttribute("aria-labelledby", label);
      selection.dataset.named = "1";
    }
  }
  function mend(root) {
    nameSearchIcons(root);
    nameAutocompletes(root);
  }
  let pending = false;
  new MutationObserver(() => {
    if (pending) return;
    pending = true;
    queueMicrotask(() => {
      pending = false;
      mend(document);
    });
  }).observe(document.documentElement, {childList: true, subtree: true});
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => mend(document));
  else mend(document);
})();
