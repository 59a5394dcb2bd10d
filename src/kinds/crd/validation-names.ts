/**
 * @module kinds/crd/validation-names
 * IsDNS1035Label (apimachinery util/validation): CRD version names, plural, singular, short names and categories.
 */

const FMT = '[a-z]([-a-z0-9]*[a-z0-9])?';
const MSG =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const RE = new RegExp(`^${FMT}$`);

/** isDNS1035Label returns kube's problems with `value` as a DNS-1035 label (empty: valid). */
export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (Buffer.byteLength(value) > 63) errs.push('must be no more than 63 characters');
  if (!RE.test(value)) errs.push(`${MSG} (e.g. 'my-name',  or 'abc-123', regex used for validation is '${FMT}')`);
  return errs;
}
