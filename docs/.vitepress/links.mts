import type MarkdownIt from 'markdown-it';

type Rule = NonNullable<MarkdownIt['renderer']['rules']['link_open']>;

/**
 * Links into the API reference (`/api/...`, TypeDoc's HTML in `public/api`) open as ordinary page
 * loads: the site's router would otherwise look for a VitePress page there. VitePress's own rule runs
 * first, so such a link is still checked against the files in `public/` like every other link.
 */
export function apiReferenceLinks(md: MarkdownIt): void {
  const vitepress = md.renderer.rules.link_open as Rule;
  md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
    const html = vitepress(tokens, idx, options, env, self);
    const href = tokens[idx]?.attrGet('href') ?? '';
    return href.startsWith('/api/') ? html.replace(/^<a /, '<a target="_self" ') : html;
  };
}

/**
 * Pages that include a file of the repository (SECURITY.md, an example's README) keep its text, but
 * a link of that file to a source file (`test/fixtures/attacks.ts`) has nothing to point at on the
 * site, which serves no sources: it is shown as its text alone. Links to pages and anchors are kept.
 */
export function sourceFileLinks(md: MarkdownIt): void {
  const isSourceFile = (href: string) =>
    !/^([a-z][a-z0-9+.-]*:|\/|#)/i.test(href) &&
    /\.[a-z0-9]+$/i.test(href.replace(/[?#].*$/, '')) &&
    !/\.(md|html)$/i.test(href.replace(/[?#].*$/, ''));
  md.core.ruler.push('keygate_source_file_links', (state) => {
    for (const block of state.tokens) {
      const open: number[] = [];
      for (const token of block.children ?? []) {
        if (token.type === 'link_open') {
          const hidden = isSourceFile(token.attrGet('href') ?? '');
          token.hidden = hidden;
          open.push(hidden ? 1 : 0);
        } else if (token.type === 'link_close') {
          token.hidden = open.pop() === 1;
        }
      }
    }
  });
}
