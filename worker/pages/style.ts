import { TOKENS_CSS } from '../../shared/tokens';

/** The one stylesheet of the HTML pages, served at /assets/knock.css: the shared tokens and buttons (shared/tokens.ts), then the console's layout. */
export const STYLESHEET = `${TOKENS_CSS}
* { box-sizing: border-box; }
body { margin:0; font:16px/1.5 var(--font); color:var(--fg); background:var(--bg); }
.skip { position:absolute; left:-9999px; top:8px; background:var(--card); padding:8px 12px; border-radius:8px; z-index:10; }
.skip:focus { left:8px; }
.visually-hidden { position:absolute; width:1px; height:1px; padding:0; margin:-1px; overflow:hidden; clip:rect(0,0,0,0); white-space:nowrap; border:0; }
header.top { padding:10px 24px; border-bottom:1px solid var(--line); background:var(--card); display:flex; gap:24px; align-items:center; flex-wrap:wrap; }
header.top a.brand { font-weight:700; color:var(--fg); text-decoration:none; font-size:18px; }
header.top nav { flex:1; }
header.top form { margin-left:auto; }
nav ul { list-style:none; display:flex; gap:18px; margin:0; padding:0; flex-wrap:wrap; }
nav a { text-decoration:none; }
nav a[aria-current=page] { font-weight:700; text-decoration:underline; text-underline-offset:6px; }
nav.tabs { margin-bottom:16px; }
main { max-width:440px; margin:48px auto; padding:0 16px; }
main.wide { max-width:1040px; margin-top:28px; }
.card { background:var(--card); border:1px solid var(--line); border-radius:12px; padding:24px 28px; margin-bottom:20px; }
h1 { font-size:24px; margin:0 0 16px; }
h2 { font-size:19px; margin:0 0 14px; }
h3 { font-size:16px; margin:22px 0 8px; }
p.muted, .muted { color:var(--muted); }
label { display:block; font-weight:600; margin:14px 0 6px; }
label.choice { font-weight:400; display:flex; gap:8px; align-items:center; margin:8px 0; }
fieldset { border:1px solid var(--line); border-radius:8px; margin:14px 0; padding:6px 14px 10px; }
legend { font-weight:600; padding:0 4px; }
input[type=text], input[type=url], input[type=password], input[type=email], input[type=search], input[type=date], select, textarea { padding:8px 10px; border:1px solid var(--line); border-radius:8px; background:var(--bg); color:var(--fg); font:inherit; }
input[type=text], input[type=url], input[type=password], input[type=email], textarea { width:100%; }
pre { white-space:pre-wrap; overflow-wrap:anywhere; font-size:13px; }
input[aria-invalid=true], select[aria-invalid=true], textarea[aria-invalid=true] { border-color:var(--danger); }
.actions { display:flex; gap:12px; margin-top:20px; align-items:center; }
.actions.stretch button { flex:1; }
.error, .field-error { color:var(--danger); }
.error { border:1px solid var(--danger); border-radius:8px; padding:10px 12px; margin-bottom:12px; }
.field-error { margin:6px 0 0; font-weight:600; flex-basis:100%; }
.notice { border:1px solid var(--ok); background:var(--ok-bg); color:var(--fg); border-radius:8px; padding:10px 14px; margin-bottom:16px; }
.secret { border:2px solid var(--accent); border-radius:10px; padding:14px 16px; margin:12px 0 18px; }
ul.scopes { padding-left:20px; }
ul.plain { list-style:none; padding:0; margin:0; }
ul.plain li { padding:8px 0; border-bottom:1px solid var(--line); }
ul.requests { list-style:none; padding:0; margin:0; }
ul.requests li { display:flex; justify-content:space-between; gap:16px; padding:12px 0; border-bottom:1px solid var(--line); flex-wrap:wrap; }
form.row-form { display:flex; gap:8px; align-items:center; flex-wrap:wrap; margin:0; }
form.row-form label { margin:0; font-weight:400; font-size:14px; }
form.row-form span.muted { flex:1; min-width:240px; }
ul.requests form.row-form select { width:11em; }
ul.requests form.row-form input[type=date] { width:10.5em; }
td form.row-form label { position:absolute; left:-9999px; }
.fields { display:grid; grid-template-columns:repeat(auto-fit, minmax(200px, 1fr)); gap:0 16px; }
form.search { display:flex; gap:8px; align-items:end; flex-wrap:wrap; margin-bottom:16px; }
form.search label { flex-basis:100%; margin-bottom:0; }
form.search input { flex:1; min-width:200px; }
table { width:100%; border-collapse:collapse; }
th, td { text-align:left; padding:10px 6px; border-bottom:1px solid var(--line); vertical-align:middle; }
dl.facts { display:grid; grid-template-columns:max-content 1fr; gap:4px 16px; margin:0 0 8px; }
dl.facts dt { color:var(--muted); }
dl.facts dd { margin:0; }
.pagination { display:flex; gap:16px; align-items:center; margin-top:14px; }
form.inline { display:inline; margin:0; }
footer { text-align:center; margin:24px 0; }
code, td, dd { overflow-wrap:anywhere; }
a.waiting { margin-left:auto; font-weight:600; text-decoration:none; white-space:nowrap; }
a.waiting .count { display:inline-block; min-width:1.6em; padding:0 var(--space-2); border-radius:999px; background:var(--primary); color:var(--on-primary); text-align:center; }
header.top a.waiting + form { margin-left:0; }
form.filters { display:flex; flex-wrap:wrap; gap:var(--space-2) var(--space-3); align-items:end; margin-bottom:var(--space-4); }
form.filters > div { flex:1 1 150px; min-width:0; }
form.filters label { margin:0 0 var(--space-1); font-size:14px; }
form.filters input, form.filters select { width:100%; }
form.bulk { padding:var(--space-3) 0; border-bottom:1px solid var(--line); }
ul.requests li.request { justify-content:flex-start; }
ul.requests li.request > div.who { flex:1 1 240px; min-width:0; }
ul.requests li.request > input.select { width:20px; height:20px; margin:4px 0 0; flex:none; }
ul.requests li.request > form.row-form { flex:0 1 auto; }
/* Narrow screens (a 390 px phone): nothing wider than the screen; a table's rows stack their cells. */
@media (max-width: 640px) {
  header.top { padding:10px 12px; gap:12px; }
  main.wide { margin-top:16px; padding:0 8px; }
  .card { padding:16px; }
  table thead { position:absolute; width:1px; height:1px; overflow:hidden; clip:rect(0,0,0,0); }
  table tr { display:flex; flex-wrap:wrap; align-items:center; gap:4px 12px; padding:10px 0; border-bottom:1px solid var(--line); }
  table td, table th { display:block; border:0; padding:2px 0; }
  table tr > :first-child { flex-basis:100%; }
  form.row-form span.muted { min-width:0; flex-basis:100%; }
  input[type=date], select { max-width:100%; }
}
`;
