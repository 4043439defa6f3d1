"use strict";
// Django's admin writes some image alternative texts in English whatever the language: the boolean icons
// ("True", "False", "None": admin_list._boolean_icon) and the search icon ("Search"). Screen readers read them,
// so they take the translations the page carries in this script's data attributes
// (templates/admin/base_site.html).
(function () {
  const words = document.currentScript.dataset;
  const icons = {"icon-yes.svg": words.yes, "icon-no.svg": words.no, "icon-unknown.svg": words.unknown,
                 "search.svg": words.search};
  function translate() {
    for (const img of document.querySelectorAll("img[alt]")) {
      const file = (img.getAttribute("src") || "").split("/").pop().split("?")[0];
      if (Object.hasOwn(icons, file)) img.alt = icons[file];
    }
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", translate);
  else translate();
})();
