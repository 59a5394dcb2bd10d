/**
 * @module kinds/crd/validation-webhook
 * A conversion webhook's client config as kube checks it (apiserver util/webhook ValidateWebhookURL with https forced,
 * ValidateWebhookService). The caBundle is not checked on create (kube allows an invalid one until Established).
 */
import { invalid, required } from './validation-field.js';
import type { FieldError } from '../../apis/meta/field-path.js';
import { isDNS1123Subdomain } from '../../apis/meta/validation.js';

const FORM = '; desired format: https://host[/path]';

/** validateWebhookURL is ValidateWebhookURL(fldPath, url, true), URL parsing approximated by WHATWG's. */
export function validateWebhookURL(p: string, url: string): FieldError[] {
  const m = /^(?:([A-Za-z][A-Za-z0-9+.-]*):)?(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/.exec(url);
  if (!m) return [required(p, `url must be a valid URL: parse ${JSON.stringify(url)}: invalid URI for request${FORM}`)];
  const [, scheme = '', authority, , query = '', fragment = ''] = m;
  const errs: FieldError[] = [];
  if (scheme !== 'https') errs.push(invalid(p, scheme, `'https' is the only allowed URL scheme${FORM}`));
  const at = authority?.lastIndexOf('@') ?? -1;
  const host = authority === undefined ? '' : authority.slice(at + 1);
  if (!host) errs.push(invalid(p, host, `host must be specified${FORM}`));
  if (authority !== undefined && at >= 0) errs.push(invalid(p, authority.slice(0, at), 'user information is not permitted in the URL'));
  if (fragment) errs.push(invalid(p, fragment, 'fragments are not permitted in the URL'));
  if (query) errs.push(invalid(p, query, 'query parameters are not permitted in the URL'));
  return errs;
}

/** validateWebhookService is ValidateWebhookService (port already defaulted to 443). */
export function validateWebhookService(p: string, svc: Record<string, unknown>): FieldError[] {
  const errs: FieldError[] = [];
  const name = typeof svc.name === 'string' ? svc.name : '';
  const namespace = typeof svc.namespace === 'string' ? svc.namespace : '';
  const port = typeof svc.port === 'number' ? svc.port : 0;
  if (!name) errs.push(required(`${p}.name`));
  if (!namespace) errs.push(required(`${p}.namespace`));
  if (port < 1 || port > 65535) errs.push(invalid(`${p}.port`, port, 'port is not valid: must be between 1 and 65535, inclusive'));
  if (typeof svc.path !== 'string') return errs;
  const path = svc.path;
  if (path === '/' || path === '') return errs;
  if (path === '//') return [...errs, invalid(`${p}.path`, path, 'segment[0] may not be empty')];
  if (!path.startsWith('/')) errs.push(invalid(`${p}.path`, path, "must start with a '/'"));
  let check = path.slice(1);
  if (check.endsWith('/')) check = check.slice(0, -1);
  check.split('/').forEach((step, i) => {
    if (!step) errs.push(invalid(`${p}.path`, path, `segment[${i}] may not be empty`));
    else for (const f of isDNS1123Subdomain(step)) errs.push(invalid(`${p}.path`, path, `segment[${i}]: ${f}`));
  });
  return errs;
}
