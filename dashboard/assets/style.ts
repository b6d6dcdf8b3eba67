/** The dashboard's stylesheet, served from `<basePath>/assets/dashboard.css` (no inline styles anywhere). */
export const STYLE = `
:root { --ink: #1b1f24; --muted: #57606a; --line: #d0d7de; --bg: #f6f8fa; --card: #ffffff; --accent: #0b5cad;
  --accent-ink: #ffffff; --ok: #116329; --ok-bg: #dafbe1; --warn: #7a4a00; --warn-bg: #fff1c2; --bad: #a40e26;
  --bad-bg: #ffebe9; --allowed: #2f6fb3; --denied: #c2410c; --focus: #bf4b00;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--ink); }
* { box-sizing: border-box; }
[hidden] { display: none !important; }
body { margin: 0; background: var(--bg); line-height: 1.5; }
a { color: var(--accent); }
a:hover { text-decoration-thickness: 2px; }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
code, pre, .secret { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.92em; }
pre { background: var(--bg); border: 1px solid var(--line); border-radius: 6px; padding: 0.6rem 0.8rem; overflow-x: auto; }
.skip { position: absolute; left: -9999px; }
.skip:focus { left: 1rem; top: 0.5rem; background: var(--card); padding: 0.4rem 0.8rem; z-index: 10; }
.visually-hidden { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
.top { display: flex; align-items: center; gap: 1.2rem; padding: 0.7rem 1.5rem; background: #24292f; color: #ffffff; }
.top a, .top .link-button { color: #ffffff; }
.top .muted { color: #d0d7de; }
.brand { font-weight: 700; text-decoration: none; letter-spacing: 0.02em; margin-right: auto; }
.who { font-size: 0.95rem; }
main { max-width: 72rem; margin: 0 auto; padding: 1.5rem; }
h1 { font-size: 1.7rem; margin: 0.3rem 0 1rem; overflow-wrap: anywhere; }
h2 { font-size: 1.2rem; margin: 0 0 0.7rem; }
h3 { font-size: 1rem; margin: 1rem 0 0.5rem; }
.muted { color: var(--muted); }
.crumbs { margin: 0; font-size: 0.95rem; overflow-wrap: anywhere; }
main p, main li { overflow-wrap: anywhere; }
.title-row { display: flex; align-items: center; justify-content: space-between; gap: 1rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 1rem 1.2rem; margin: 1rem 0; }
.card.narrow { max-width: 38rem; }
.button { display: inline-block; font: inherit; padding: 0.45rem 0.95rem; border-radius: 6px; border: 1px solid var(--line);
  background: var(--card); color: var(--ink); cursor: pointer; text-decoration: none; }
.button.primary { background: var(--accent); border-color: var(--accent); color: var(--accent-ink); }
.button.danger { color: var(--bad); border-color: var(--bad); }
.button[disabled] { color: var(--muted); border-color: var(--line); background: var(--bg); cursor: not-allowed; }
.link-button { font: inherit; background: none; border: 0; padding: 0; text-decoration: underline; cursor: pointer; }
form.inline { display: inline; }
.row { display: flex; flex-wrap: wrap; align-items: center; gap: 0.6rem; }
.filter { display: flex; flex-wrap: wrap; align-items: center; gap: 0.6rem; margin: 1rem 0 0.3rem; }
.filter select { font: inherit; padding: 0.35rem 0.5rem; border: 1px solid #8c959f; border-radius: 6px; background: #ffffff; }
.filter input { font: inherit; padding: 0.35rem 0.5rem; border: 1px solid #8c959f; border-radius: 6px; min-width: 16rem; }
.table-wrap { overflow-x: auto; }
.table { width: 100%; border-collapse: collapse; background: var(--card); }
.table th, .table td { text-align: left; padding: 0.5rem 0.7rem; border-bottom: 1px solid var(--line); vertical-align: middle; }
.table thead th { background: var(--bg); font-size: 0.85rem; color: var(--muted); font-weight: 600; }
.table tbody th { font-weight: 600; }
.table.keys { border: 1px solid var(--line); border-radius: 8px; }
.table.keys tbody th { overflow-wrap: anywhere; min-width: 8rem; }
.table.keys td:not(.rotation) { white-space: nowrap; }
.table.keys .rotation { font-size: 0.9rem; }
.pair { display: block; overflow-wrap: anywhere; }
.table.compact th, .table.compact td { padding: 0.25rem 0.6rem; }
.table caption { text-align: left; font-weight: 600; padding: 0 0 0.4rem; }
.num { text-align: right !important; font-variant-numeric: tabular-nums; }
.badge { display: inline-block; padding: 0.05rem 0.5rem; border-radius: 999px; font-size: 0.82rem; font-weight: 600; background: var(--bg); border: 1px solid var(--line); }
.badge-ok { color: var(--ok); background: var(--ok-bg); border-color: #aceebb; }
.badge-warn { color: var(--warn); background: var(--warn-bg); border-color: #f2d37a; }
.badge-bad { color: var(--bad); background: var(--bad-bg); border-color: #ffcecb; }
.facts { display: grid; grid-template-columns: repeat(auto-fill, minmax(13rem, 1fr)); gap: 0.6rem 1.2rem; margin: 0.5rem 0 1rem; }
.facts dt { font-size: 0.82rem; color: var(--muted); }
.facts dd { margin: 0; overflow-wrap: anywhere; }
.form .field { margin: 0 0 1.1rem; border: 0; padding: 0; }
.form label, .form legend { display: block; font-weight: 600; margin-bottom: 0.15rem; }
.form .check label, .form .row label { display: inline; font-weight: 400; margin: 0 0 0 0.3rem; }
.form input:not([type=checkbox]), .form textarea, .form select { font: inherit; padding: 0.4rem 0.55rem; border: 1px solid #8c959f; border-radius: 6px; background: #ffffff; }
.form input[type=text], .form input:not([type]), .form textarea { width: min(100%, 34rem); }
.form input.short { width: 10rem; }
.form textarea { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.checks { display: flex; flex-wrap: wrap; gap: 0.4rem 1.4rem; }
.check { margin: 0.35rem 0; }
.hint { color: var(--muted); font-size: 0.9rem; margin: 0 0 0.35rem; }
.error { color: var(--bad); font-weight: 600; margin: 0 0 0.35rem; }
.has-error input, .has-error textarea, .has-error select { border-color: var(--bad) !important; border-width: 2px !important; }
.has-error { border-left: 4px solid var(--bad) !important; padding-left: 0.8rem !important; }
.error-summary { border: 3px solid var(--bad); background: var(--card); padding: 0.8rem 1rem; margin: 0 0 1rem; border-radius: 6px; }
.error-summary h2 { font-size: 1.05rem; color: var(--bad); }
.error-summary ul { margin: 0; padding-left: 1.2rem; }
.actions { display: flex; align-items: center; gap: 1rem; margin-top: 1.2rem; }
.flash { background: var(--ok-bg); color: var(--ok); border: 1px solid #aceebb; border-radius: 6px; padding: 0.5rem 0.8rem; }
.notice { background: var(--bad-bg); color: var(--bad); border: 1px solid #ffcecb; border-radius: 6px; padding: 0.6rem 0.9rem; }
.notice.warn { background: var(--warn-bg); color: var(--warn); border-color: #f2d37a; }
.no-traffic { background: var(--bg); border: 1px dashed var(--line); border-radius: 6px; padding: 1.2rem; text-align: center; color: var(--muted); }
.new-key { border: 2px solid var(--accent); background: var(--card); border-radius: 8px; padding: 1rem 1.2rem; margin: 1rem 0; }
.secret-row { display: flex; flex-wrap: wrap; gap: 0.6rem; align-items: center; margin: 0.6rem 0; }
.secret { width: min(100%, 40rem); padding: 0.55rem 0.7rem; border: 1px solid #8c959f; border-radius: 6px; background: var(--bg); font-size: 1rem; }
.copied { color: var(--ok); font-weight: 600; }
.steps li, .checklist li { margin: 0.3rem 0; }
.checklist { list-style: none; padding: 0; }
.checklist li::before { display: inline-block; width: 1.4rem; font-weight: 700; }
.checklist li.done::before { content: "\\2713"; color: var(--ok); }
.checklist li.todo::before { content: "\\2026"; color: var(--warn); }
.chart { width: 100%; max-width: 46rem; height: auto; display: block; }
.chart .bar-allowed, .swatch-allowed { fill: var(--allowed); background: var(--allowed); }
.chart .bar-denied, .swatch-denied { fill: var(--denied); background: var(--denied); }
.chart .grid { stroke: var(--line); stroke-width: 1; }
.chart .axis { fill: var(--muted); font-size: 11px; font-family: system-ui, sans-serif; }
.legend { font-size: 0.9rem; color: var(--muted); }
.swatch { display: inline-block; width: 0.8rem; height: 0.8rem; border-radius: 2px; margin: 0 0.3rem 0 0.8rem; vertical-align: -0.1rem; }
.spark { display: block; }
.spark path { fill: var(--allowed); }
.spark .spark-base { stroke: var(--line); }
.two-col { display: grid; grid-template-columns: repeat(auto-fit, minmax(18rem, 1fr)); gap: 1.5rem; }
.pagination { display: flex; gap: 1rem; align-items: center; justify-content: center; margin: 1rem 0; }
.empty { background: var(--card); border: 1px dashed var(--line); padding: 1.5rem; border-radius: 8px; text-align: center; }
.danger-zone { border-color: var(--bad); }
`;
