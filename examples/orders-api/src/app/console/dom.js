// Building the page's nodes. Every text the API returns (names, metadata, leak URLs, audit
// changes) goes through `el`/`svg` as a text node, never parsed as markup; the server's
// Content-Security-Policy allows no inline script, so even a slip would not run.

const SVG = 'http://www.w3.org/2000/svg';

/** The page's element with this id (a missing one is a bug of the page, said at once). */
export function $(id) {
  const node = document.getElementById(id);
  if (node === null) throw new Error(`the page has no #${id}`);
  return node;
}

function fill(node, attributes, children) {
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  for (const child of children) node.append(typeof child === 'string' ? document.createTextNode(child) : child);
  return node;
}

/** An element with attributes and children; a string child becomes a text node. */
export function el(tag, attributes = {}, ...children) {
  return fill(document.createElement(tag), attributes, children);
}

/** The same in the SVG namespace, for the usage chart. */
export function svg(tag, attributes = {}, ...children) {
  return fill(document.createElementNS(SVG, tag), attributes, children);
}

/** A button that runs `action` when pressed, with an accessible name when given. */
export function button(text, action, label) {
  const node = el('button', label === undefined ? { type: 'button' } : { type: 'button', 'aria-label': label }, text);
  node.addEventListener('click', action);
  return node;
}

/** The status line at the top of the page (a polite live region). */
export function setStatus(text, kind = 'info') {
  const status = $('status');
  status.textContent = text;
  status.className = kind;
}
