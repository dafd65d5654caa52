/** The one stylesheet of the HTML pages, served at /assets/knock.css. */
export const STYLESHEET = `
:root { color-scheme: light dark; --fg:#1f2328; --muted:#59636e; --bg:#f6f8fa; --card:#fff; --line:#d1d9e0; --accent:#1f6feb; --danger:#cf222e; }
@media (prefers-color-scheme: dark) { :root { --fg:#e6edf3; --muted:#9198a1; --bg:#0d1117; --card:#151b23; --line:#3d444d; --accent:#4493f8; --danger:#f85149; } }
* { box-sizing: border-box; }
body { margin:0; font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif; color:var(--fg); background:var(--bg); }
header.top { padding:12px 24px; border-bottom:1px solid var(--line); background:var(--card); display:flex; justify-content:space-between; align-items:center; }
header.top a.brand { font-weight:700; color:var(--fg); text-decoration:none; font-size:18px; }
main { max-width:440px; margin:48px auto; padding:0 16px; }
main.wide { max-width:760px; }
.card { background:var(--card); border:1px solid var(--line); border-radius:12px; padding:28px; }
h1 { font-size:22px; margin:0 0 16px; }
p.muted, .muted { color:var(--muted); }
label { display:block; font-weight:600; margin:14px 0 6px; }
input[type=text], input[type=password], input[type=email] { width:100%; padding:9px 12px; border:1px solid var(--line); border-radius:8px; background:var(--bg); color:var(--fg); font:inherit; }
input:focus-visible, button:focus-visible, a:focus-visible { outline:3px solid var(--accent); outline-offset:2px; }
button { font:inherit; font-weight:600; padding:9px 16px; border-radius:8px; border:1px solid var(--line); background:var(--card); color:var(--fg); cursor:pointer; }
button.primary { background:var(--accent); border-color:var(--accent); color:#fff; }
button.danger { color:var(--danger); }
.actions { display:flex; gap:12px; margin-top:22px; }
.actions.stretch button { flex:1; }
.error { border:1px solid var(--danger); color:var(--danger); border-radius:8px; padding:10px 12px; margin-bottom:12px; }
ul.scopes { padding-left:20px; }
table { width:100%; border-collapse:collapse; }
th, td { text-align:left; padding:10px 6px; border-bottom:1px solid var(--line); vertical-align:middle; }
a { color:var(--accent); }
form.inline { display:inline; margin:0; }
footer { text-align:center; margin:24px 0; }
`;
