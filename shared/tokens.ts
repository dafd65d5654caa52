// One visual language for the console (worker/pages/style.ts), the popup and the options page
// (extension/components/tokens.ts puts it in their pages): the colours, spacing, radii and buttons,
// as CSS custom properties and rules. A TypeScript string, so the Worker's bundler and the
// extension's both take it. Every text colour keeps WCAG 2.x AA's 4.5:1 on --bg and on --card,
// and button text on its button (test/extension/theme.test.ts).

export const TOKENS_CSS = `
:root {
  color-scheme: light dark;
  --fg:#1f2328; --muted:#59636e; --bg:#f6f8fa; --card:#ffffff; --line:#d1d9e0;
  --accent:#0969da; --primary:#0969da; --on-primary:#ffffff;
  --danger:#cf222e; --ok:#1a7f37; --ok-bg:#dafbe1;
  --space-1:4px; --space-2:8px; --space-3:12px; --space-4:16px; --space-5:24px;
  --radius:8px; --radius-lg:12px;
  --font:system-ui,-apple-system,"Segoe UI",sans-serif;
}
@media (prefers-color-scheme: dark) {
  :root {
    --fg:#e6edf3; --muted:#9198a1; --bg:#0d1117; --card:#151b23; --line:#3d444d;
    --accent:#4493f8; --primary:#1f6feb; --on-primary:#ffffff;
    --danger:#f85149; --ok:#3fb950; --ok-bg:#12261e;
  }
}
button, a.button { display:inline-block; font:inherit; font-weight:600; padding:var(--button-pad, var(--space-2) 14px); border-radius:var(--radius); border:1px solid var(--line); background:var(--card); color:var(--fg); cursor:pointer; text-decoration:none; line-height:1.5; }
button:disabled { opacity:0.6; cursor:default; }
button.primary { background:var(--primary); border-color:var(--primary); color:var(--on-primary); }
button.danger, a.button.danger { color:var(--danger); border-color:var(--danger); }
button.link { background:none; border:none; color:var(--accent); padding:2px 4px; font-weight:normal; }
:focus-visible { outline:3px solid var(--accent); outline-offset:2px; }
a { color:var(--accent); }
time[title] { text-decoration:underline dotted; text-underline-offset:3px; }
`;
