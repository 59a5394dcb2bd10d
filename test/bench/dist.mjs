/**
 * @module bench/dist
 * The built modules the benchmark reuses, loaded from dist/ (`npm run bench` builds first) and typed by their
 * sources. The specifier is computed so the type checker does not try to check the emitted JavaScript.
 */
const built = (/** @type {string} */ p) => new URL(`../../dist/${p}`, import.meta.url).href;

/** @type {typeof import('../../src/kinds/website/v1.js')} */
export const website = await import(built('kinds/website/v1.js'));

/** @type {typeof import('../../src/certs/issue.js')} */
export const certs = await import(built('certs/issue.js'));

/** @type {typeof import('../../src/registry/patch.js')} */
export const patch = await import(built('registry/patch.js'));

/** @type {typeof import('../../src/registry/table.js')} */
export const tables = await import(built('registry/table.js'));

/** @type {typeof import('../../src/manifests/render.js')} */
export const manifests = await import(built('manifests/render.js'));
