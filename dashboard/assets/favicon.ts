/**
 * The dashboard's icon, served from `<basePath>/assets/favicon.svg` and named by every page's
 * `<link rel="icon">`, so browsers ask for it there instead of a `/favicon.ico` that is not the
 * dashboard's to answer. A key on a dark tile, drawn with nothing a user typed.
 */
export const FAVICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#24292f"/><circle cx="11" cy="16" r="5" fill="none" stroke="#ffffff" stroke-width="3"/><path d="M16 16h11v4M23 16v3" fill="none" stroke="#ffffff" stroke-width="3" stroke-linecap="round"/></svg>
`;
