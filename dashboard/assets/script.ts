/**
 * The dashboard's only script, served from `<basePath>/assets/dashboard.js` (the CSP allows 'self'
 * scripts, never inline ones). Progressive enhancement: every page works without it. It shows the
 * "Copy" button next to a new key, selects the key when it gets focus, moves focus to the error
 * summary of a refused form, and lets Space follow a link shown as a button, as it presses a button.
 */
export const SCRIPT = `(() => {
  'use strict';
  function copy(input, status) {
    const done = () => { status.textContent = 'Copied to the clipboard.'; };
    const fallback = () => { input.focus(); input.select(); try { document.execCommand('copy'); done(); } catch { status.textContent = 'Press Ctrl+C (or Cmd+C) to copy.'; } };
    if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(input.value).then(done, fallback);
    else fallback();
  }
  document.addEventListener('DOMContentLoaded', () => {
    for (const button of document.querySelectorAll('button[data-copy]')) {
      const input = document.getElementById(button.getAttribute('data-copy'));
      const status = document.querySelector('[data-copied-for="' + button.getAttribute('data-copy') + '"]');
      if (!input || !status) continue;
      button.hidden = false;
      button.addEventListener('click', () => copy(input, status));
      input.addEventListener('focus', () => input.select());
      if (document.activeElement === input) input.select();
    }
    for (const link of document.querySelectorAll('a[role="button"]')) {
      link.addEventListener('keydown', (event) => {
        if (event.key === ' ') { event.preventDefault(); link.click(); }
      });
    }
    const summary = document.querySelector('.error-summary');
    if (summary) summary.focus();
  });
})();
`;
