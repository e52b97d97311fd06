/**
 * The panel's markdown: markdown-it with raw HTML off; code blocks highlighted
 * (`./highlight`) and wrapped in a `.code-block` with a Copy button. Pure (no DOM).
 */

import MarkdownIt from 'markdown-it';
import { highlight } from './highlight';

export const markdown = new MarkdownIt({
  html: false,
  linkify: true,
  breaks: false,
  highlight: (code, lang) => highlight(code, lang),
});

const COPY_BUTTON = '<button class="icon copy-code" title="Copy the code" aria-label="Copy the code">Copy</button>';

for (const rule of ['fence', 'code_block'] as const) {
  const render = markdown.renderer.rules[rule];
  if (!render) throw new Error(`markdown-it has no ${rule} rule`);
  markdown.renderer.rules[rule] = (tokens, idx, options, env, self) =>
    `<div class="code-block">${COPY_BUTTON}${render(tokens, idx, options, env, self)}</div>\n`;
}

/** Markdown source to HTML (raw HTML in the source is escaped). */
export function renderMarkdown(source: string): string {
  return markdown.render(source);
}
