// The activation page's one script: registers the ALTCHA widget's PBKDF2 worker (served
// from this origin, so the CSP allows it) before the widget starts.
globalThis.$altcha.algorithms.set("PBKDF2/SHA-256", () => new Worker("/assets/altcha/pbkdf2.js"));
