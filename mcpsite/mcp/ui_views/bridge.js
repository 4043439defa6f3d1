// The shared part of mcpsite's MCP Apps views (inlined into each view by mcpsite/mcp/ui.py; docs/mcp-apps.md).
// Speaks the MCP Apps postMessage JSON-RPC with the host (ui/initialize, tool-input, tool-result, host context,
// tools/call, ui/update-model-context, size changes), picks Japanese or English from the host's locale, and builds
// DOM nodes with text only: data is never parsed as markup.
"use strict";

const McpView = (() => {
  const PROTOCOL_VERSION = "2026-01-26";
  const pending = new Map();
  let nextId = 1;
  let hostContext = {};
  let options = {};

  function post(message) {
    // The host's origin is unknown to a sandboxed view (an opaque origin); replies are checked by source.
    window.parent.postMessage(message, "*");
  }

  function request(method, params) {
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      post({ jsonrpc: "2.0", id, method, params });
    });
  }

  function notify(method, params) {
    post({ jsonrpc: "2.0", method, params: params || {} });
  }

  function applyContext(changes) {
    hostContext = Object.assign({}, hostContext, changes || {});
    document.documentElement.lang = lang();
    document.documentElement.dataset.theme = hostContext.theme === "dark" ? "dark" : "light";
    translate();
    if (options.onContext) options.onContext(hostContext);
  }

  function onMessage(event) {
    if (event.source !== window.parent) return;
    const message = event.data;
    if (!message || message.jsonrpc !== "2.0") return;
    if (message.method === undefined && message.id !== undefined) {
      const waiter = pending.get(message.id);
      if (!waiter) return;
      pending.delete(message.id);
      if (message.error) waiter.reject(message.error);
      else waiter.resolve(message.result);
      return;
    }
    if (message.id !== undefined) {
      // A request from the host: answer the two a view must, refuse the rest.
      if (message.method === "ping" || message.method === "ui/resource-teardown") {
        post({ jsonrpc: "2.0", id: message.id, result: {} });
      } else {
        post({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "Method not found" } });
      }
      return;
    }
    const params = message.params || {};
    if (message.method === "ui/notifications/tool-input" && options.onToolInput) {
      options.onToolInput(params.arguments || {});
    } else if (message.method === "ui/notifications/tool-result" && options.onToolResult) {
      options.onToolResult(params);
    } else if (message.method === "ui/notifications/tool-cancelled" && options.onCancelled) {
      options.onCancelled(params.reason);
    } else if (message.method === "ui/notifications/host-context-changed") {
      applyContext(params);
    }
  }

  /** Connect to the host: `opts` = {name, strings: {en: {...}, ja: {...}}, onToolInput, onToolResult, onContext}. */
  async function start(opts) {
    options = opts;
    window.addEventListener("message", onMessage);
    applyContext({});
    try {
      const result = await request("ui/initialize", {
        protocolVersion: PROTOCOL_VERSION,
        appInfo: { name: opts.name, version: "1" },
        appCapabilities: {},
      });
      applyContext((result && result.hostContext) || {});
    } finally {
      notify("ui/notifications/initialized");
    }
    if (window.ResizeObserver) {
      new ResizeObserver(() => {
        const box = document.documentElement.getBoundingClientRect();
        notify("ui/notifications/size-changed", { width: Math.ceil(box.width), height: Math.ceil(box.height) });
      }).observe(document.documentElement);
    }
  }

  /** Call one of this server's tools through the host; resolves with the CallToolResult. */
  function callTool(name, args) {
    return request("tools/call", { name, arguments: args });
  }

  /** Tell the model what the person did here (hosts that support it; ignored elsewhere). */
  function tellModel(text) {
    return request("ui/update-model-context", { content: [{ type: "text", text }] }).catch(() => undefined);
  }

  function lang() {
    const locale = hostContext.locale || navigator.language || "en";
    return String(locale).toLowerCase().startsWith("ja") ? "ja" : "en";
  }

  function t(key, vars) {
    const table = (options.strings && options.strings[lang()]) || {};
    let text = table[key] !== undefined ? table[key] : key;
    for (const [name, value] of Object.entries(vars || {})) text = text.split(`{${name}}`).join(String(value));
    return text;
  }

  /** Fill every [data-i18n] element's text (and [data-i18n-label]'s aria-label) in the current language. */
  function translate() {
    for (const node of document.querySelectorAll("[data-i18n]")) node.textContent = t(node.dataset.i18n);
    for (const node of document.querySelectorAll("[data-i18n-label]")) {
      node.setAttribute("aria-label", t(node.dataset.i18nLabel));
    }
  }

  /** An element with attributes and children; strings become text nodes (never markup). */
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      node.setAttribute(name, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined) continue;
      node.append(typeof child === "string" || typeof child === "number" ? document.createTextNode(String(child)) : child);
    }
    return node;
  }

  /** The error of a failed tool result: {code, message, data} (MCP tool errors) or {message} (in-band errors). */
  function errorOf(result) {
    if (!result || !result.isError) return null;
    let error = result.structuredContent;
    if (!error && result.content && result.content[0] && result.content[0].type === "text") {
      try {
        error = JSON.parse(result.content[0].text);
      } catch (_) {
        error = { message: result.content[0].text };
      }
    }
    if (error && typeof error.error === "string") return { message: error.error };
    return error || { message: "Error" };
  }

  /** The most specific text of an error: its data's message when there is one (as the server's `detail`). */
  function describe(error) {
    if (!error) return "";
    const data = error.data;
    const detail = typeof data === "string" ? data : data && typeof data.message === "string" ? data.message : "";
    if (detail && error.message && detail !== error.message) return `${error.message}: ${detail}`;
    return detail || error.message || "";
  }

  /** Show `text` in the element `id` (an alert or status line), or hide it when `text` is empty. */
  function say(id, text) {
    const node = document.getElementById(id);
    node.textContent = text || "";
    node.hidden = !text;
  }

  function setState(state) {
    document.body.dataset.state = state;
  }

  function money(value, currency) {
    return new Intl.NumberFormat(lang() === "ja" ? "ja-JP" : "en-US", {
      style: "currency",
      currency: currency || "JPY",
    }).format(value);
  }

  return { start, callTool, tellModel, lang, t, translate, el, errorOf, describe, say, setState, money, context: () => hostContext };
})();
