/**
 * @module apis/meta/validation
 * ObjectMeta validation with Kubernetes' rules and messages (k8s.io/apimachinery pkg/api/validation/objectmeta.go,
 * pkg/util/validation/validation.go), the name-format checks those rules build on, and name generation
 * (k8s.io/apiserver pkg/storage/names). Validators return FieldError[] and never throw.
 */
import { Buffer } from 'node:buffer';
import { randomInt } from 'node:crypto';
import { FieldPath, forbidden, invalid, path, required, tooLong } from './field-path.js';
import type { FieldError } from './field-path.js';
import type { ObjectMeta, OwnerReference } from './types.js';

/** DNS1123_LABEL_MAX_LENGTH is the longest RFC 1123 label (namespace names). */
export const DNS1123_LABEL_MAX_LENGTH = 63;
/** DNS1123_SUBDOMAIN_MAX_LENGTH is the longest RFC 1123 subdomain (object names, key prefixes). */
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;
/** QUALIFIED_NAME_MAX_LENGTH is the longest name part of a qualified name (label key, annotation key, finalizer). */
export const QUALIFIED_NAME_MAX_LENGTH = 63;
/** LABEL_VALUE_MAX_LENGTH is the longest label value. */
export const LABEL_VALUE_MAX_LENGTH = 63;
/** TOTAL_ANNOTATION_SIZE_LIMIT_B caps the summed byte size of all annotation keys and values (256 KiB). */
export const TOTAL_ANNOTATION_SIZE_LIMIT_B = 256 * 1024;
/** FIELD_IMMUTABLE_ERROR_MSG is the detail of every immutable-field error. */
export const FIELD_IMMUTABLE_ERROR_MSG = 'field is immutable';
/** FINALIZER_ORPHAN_DEPENDENTS is metav1.FinalizerOrphanDependents. */
export const FINALIZER_ORPHAN_DEPENDENTS = 'orphan';
/** FINALIZER_DELETE_DEPENDENTS is metav1.FinalizerDeleteDependents. */
export const FINALIZER_DELETE_DEPENDENTS = 'foregroundDeletion';

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_LABEL_ERR =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_SUBDOMAIN_ERR =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const QUALIFIED_NAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const QUALIFIED_NAME_ERR = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;
const LABEL_VALUE_ERR =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

// Go measures strings in bytes; so do the length limits.
const byteLength = (s: string): number => Buffer.byteLength(s, 'utf8');

const maxLenError = (n: number): string => `must be no more than ${n} characters`;
const EMPTY_ERROR = 'must be non-empty';

// Worded exactly like validation.RegexError, double space after each example's comma included.
function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  const eg = examples.map((e) => `'${e}', `).join(' or ');
  return `${msg} (e.g. ${eg}regex used for validation is '${fmt}')`;
}

// Character scans instead of the regexes: same language, linear time on hostile input.
const isLowerAlnum = (c: string) => (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
const isAlnum = (c: string) => isLowerAlnum(c) || (c >= 'A' && c <= 'Z');
const isLabelInner = (c: string) => isLowerAlnum(c) || c === '-';
const isNameInner = (c: string) => isAlnum(c) || c === '-' || c === '_' || c === '.';

/** Non-empty, alphanumeric (per `edge`) at both ends, `inner` characters in between. */
function shaped(s: string, edge: (c: string) => boolean, inner: (c: string) => boolean): boolean {
  if (s.length === 0 || !edge(s[0]!) || !edge(s[s.length - 1]!)) return false;
  for (const c of s) if (!inner(c)) return false;
  return true;
}
const matchesDNS1123Label = (s: string) => shaped(s, isLowerAlnum, isLabelInner);
const matchesDNS1123Subdomain = (s: string) => s.split('.').every(matchesDNS1123Label);
const matchesQualifiedNamePart = (s: string) => shaped(s, isAlnum, isNameInner);

/** isDNS1123Label returns the problems (empty = valid) with `value` as an RFC 1123 label, worded like Kubernetes. */
export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_LABEL_MAX_LENGTH) errs.push(maxLenError(DNS1123_LABEL_MAX_LENGTH));
  if (!matchesDNS1123Label(value)) {
    // A valid subdomain that is not a label (length already reported) can only be failing on its dots.
    if (matchesDNS1123Subdomain(value)) errs.push('must not contain dots');
    else errs.push(regexError(DNS1123_LABEL_ERR, DNS1123_LABEL_FMT, 'my-name', '123-abc'));
  }
  return errs;
}

/** isDNS1123Subdomain returns the problems (empty = valid) with `value` as an RFC 1123 subdomain, worded like Kubernetes. */
export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH));
  if (!matchesDNS1123Subdomain(value)) errs.push(regexError(DNS1123_SUBDOMAIN_ERR, DNS1123_SUBDOMAIN_FMT, 'example.com'));
  return errs;
}

/**
 * isQualifiedName returns the problems (empty = valid) with `value` as a qualified name: an optional DNS-subdomain
 * prefix and '/', then a name of at most 63 characters. Label keys, annotation keys and finalizers use this.
 */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0]!;
  } else if (parts.length === 2) {
    const prefix = parts[0]!;
    name = parts[1]!;
    if (prefix.length === 0) errs.push(`prefix part ${EMPTY_ERROR}`);
    else errs.push(...isDNS1123Subdomain(prefix).map((m) => `prefix part ${m}`));
  } else {
    return [
      `a qualified name ${regexError(QUALIFIED_NAME_ERR, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')}` +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name.length === 0) errs.push(`name part ${EMPTY_ERROR}`);
  else if (byteLength(name) > QUALIFIED_NAME_MAX_LENGTH) errs.push(`name part ${maxLenError(QUALIFIED_NAME_MAX_LENGTH)}`);
  if (!matchesQualifiedNamePart(name)) {
    errs.push(`name part ${regexError(QUALIFIED_NAME_ERR, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')}`);
  }
  return errs;
}

/** isValidLabelValue returns the problems (empty = valid) with `value` as a label value (may be empty). */
export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > LABEL_VALUE_MAX_LENGTH) errs.push(maxLenError(LABEL_VALUE_MAX_LENGTH));
  if (value.length > 0 && !matchesQualifiedNamePart(value)) {
    errs.push(regexError(LABEL_VALUE_ERR, LABEL_VALUE_FMT, 'MyValue', 'my_value', '12345'));
  }
  return errs;
}

// generateName gets a suffix appended, so a trailing '-' is fine there. Kubernetes masks it by replacing the
// last two characters with 'a' (maskTrailingDash); we do the same so the messages agree.
function maskTrailingDash(name: string): string {
  return name.length > 1 && name.endsWith('-') ? `${name.slice(0, -2)}a` : name;
}

/** nameIsDNSSubdomain validates an object name (prefix = it is a generateName, so a trailing '-' is allowed). */
export function nameIsDNSSubdomain(name: string, prefix: boolean): string[] {
  return isDNS1123Subdomain(prefix ? maskTrailingDash(name) : name);
}

/** nameIsDNSLabel validates a name that must be an RFC 1123 label, such as a namespace. */
export function nameIsDNSLabel(name: string, prefix: boolean): string[] {
  return isDNS1123Label(prefix ? maskTrailingDash(name) : name);
}

/** validateLabels checks label keys (qualified names) and values; errors are reported at `fld` itself, as Kubernetes does. */
export function validateLabels(labels: Record<string, string> | undefined, fld: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  for (const k in labels) {
    if (!Object.hasOwn(labels, k)) continue;
    const v = labels[k] as string;
    for (const msg of isQualifiedName(k)) errs.push(invalid(fld, k, msg));
    for (const msg of isValidLabelValue(v)) errs.push(invalid(fld, v, msg));
  }
  return errs;
}

/** validateAnnotations checks annotation keys (qualified names, case-insensitively) and the 256 KiB total size. */
export function validateAnnotations(annotations: Record<string, string> | undefined, fld: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  let total = 0;
  for (const k in annotations) {
    if (!Object.hasOwn(annotations, k)) continue;
    const v = annotations[k];
    // Kubernetes lowercases first: case does not matter in annotation keys.
    for (const msg of isQualifiedName(k.toLowerCase())) errs.push(invalid(fld, k, msg));
    total += byteLength(k) + byteLength(String(v));
  }
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT_B) errs.push(tooLong(fld, TOTAL_ANNOTATION_SIZE_LIMIT_B));
  return errs;
}

// schema.ParseGroupVersion: "" and "/" are empty, "v" is core, "g/v" grouped; more slashes do not parse.
function parseGroupVersion(apiVersion: string): { group: string; version: string } | undefined {
  if (apiVersion === '' || apiVersion === '/') return { group: '', version: '' };
  const parts = apiVersion.split('/');
  if (parts.length === 1) return { group: '', version: apiVersion };
  if (parts.length === 2) return { group: parts[0]!, version: parts[1]! };
  return undefined;
}

/**
 * validateOwnerReferences is ValidateOwnerReferences (apimachinery pkg/api/validation/objectmeta.go): per reference
 * (indexed paths) a required apiVersion that parses with a version, kind, name and uid, no banned owner (core/v1
 * Event, reported at the reference with its JSON), then at most one reference with `controller: true`.
 */
export function validateOwnerReferences(refs: OwnerReference[] | undefined, fld: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  let firstController = '';
  (refs ?? []).forEach((ref, i) => {
    const at = new FieldPath(`${fld}[${i}]`);
    const apiVersion = ref.apiVersion ?? '';
    const gv = parseGroupVersion(apiVersion);
    if (apiVersion === '') errs.push(required(at.child('apiVersion'), 'must not be empty'));
    else if (!gv?.version) errs.push(invalid(at.child('apiVersion'), apiVersion, 'must be <group>/<version> or <version>'));
    const kind = ref.kind ?? '';
    if (!kind) errs.push(required(at.child('kind'), 'must not be empty'));
    if (!ref.name) errs.push(required(at.child('name'), 'must not be empty'));
    if (!ref.uid) errs.push(required(at.child('uid'), 'must not be empty'));
    if (gv && gv.group === '' && gv.version === 'v1' && kind === 'Event') {
      errs.push(invalid(at, ref, '/v1, Kind=Event is disallowed from being an owner'));
    }
    if (ref.controller === true) {
      const current = `${kind}/${ref.name ?? ''}`;
      if (firstController) {
        errs.push(invalid(fld, refs, `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${current}`));
      } else {
        firstController = current;
      }
    }
  });
  return errs;
}

/** validateFinalizers checks that finalizers are qualified names and that `orphan` and `foregroundDeletion` are not both set. */
export function validateFinalizers(finalizers: string[] | undefined, fld: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const list = finalizers ?? [];
  for (const f of list) for (const msg of isQualifiedName(f)) errs.push(invalid(fld, f, msg));
  if (list.includes(FINALIZER_ORPHAN_DEPENDENTS) && list.includes(FINALIZER_DELETE_DEPENDENTS)) {
    errs.push(invalid(fld, list, `finalizer ${FINALIZER_ORPHAN_DEPENDENTS} and ${FINALIZER_DELETE_DEPENDENTS} cannot be both set`));
  }
  return errs;
}

// The finalizers kube itself owns, which need no domain (apiextensions-apiserver customresource/validator.go).
const STANDARD_FINALIZERS = new Set([FINALIZER_ORPHAN_DEPENDENTS, FINALIZER_DELETE_DEPENDENTS, 'kubernetes']);

/**
 * finalizerWarnings are the `Warning` texts kube-apiserver sends for a custom resource whose write adds a finalizer
 * that is not domain-qualified (customresource strategy.go generateWarningsFromObj, validator.go
 * validateKubeFinalizerName): for each added name, sorted and once, when it has no `/`. Names invalid as qualified
 * names are already refused by validateFinalizers, so only the domain advice remains.
 */
export function finalizerWarnings(finalizers: string[] | undefined, old: string[] | undefined): string[] {
  const before = new Set(old ?? []);
  const added = [...new Set(finalizers ?? [])].filter((f) => !before.has(f)).sort();
  const out: string[] = [];
  for (const f of added) {
    if (f.includes('/') || STANDARD_FINALIZERS.has(f)) continue;
    const advice = f.includes('.') ? 'prefer a domain-qualified finalizer name including a path (/)' : 'prefer a domain-qualified finalizer name';
    out.push(`metadata.finalizers: ${JSON.stringify(f)}: ${advice} to avoid accidental conflicts with other finalizer writers`);
  }
  return out;
}

// Go's %#v of a []string, which Kubernetes puts in the no-new-finalizers message.
const goStringSlice = (xs: string[]): string => `[]string{${xs.map((x) => JSON.stringify(x)).join(', ')}}`;

/** ObjectMetaValidationOptions says how the kind is scoped. */
export interface ObjectMetaValidationOptions {
  /** Namespaced kinds require metadata.namespace; cluster-scoped kinds forbid it. */
  namespaced: boolean;
}

/** NameValidator checks a name (prefix: it is a generateName) and returns the problems. */
type NameValidator = (name: string, prefix: boolean) => string[];

/**
 * nameIsPathSegment is the name check update validation uses (apimachinery api/validate/content path.go
 * IsPathSegmentName / IsPathSegmentPrefix, through registry/rest validatePathSegment): a name may not be `.` or `..`
 * and neither it nor a generateName may contain `/` or `%`.
 */
export function nameIsPathSegment(name: string, prefix: boolean): string[] {
  if (!prefix && (name === '.' || name === '..')) return [`may not be '${name}'`];
  return ['/', '%'].filter((c) => name.includes(c)).map((c) => `may not contain '${c}'`);
}

// The metadata's field paths, built once: every write validates its metadata.
const METADATA = path('metadata');
const META = {
  generateName: METADATA.child('generateName'),
  name: METADATA.child('name'),
  namespace: METADATA.child('namespace'),
  generation: METADATA.child('generation'),
  labels: METADATA.child('labels'),
  annotations: METADATA.child('annotations'),
  ownerReferences: METADATA.child('ownerReferences'),
  finalizers: METADATA.child('finalizers'),
  uid: METADATA.child('uid'),
  creationTimestamp: METADATA.child('creationTimestamp'),
  deletionTimestamp: METADATA.child('deletionTimestamp'),
  deletionGracePeriodSeconds: METADATA.child('deletionGracePeriodSeconds'),
} as const;

// ValidateObjectMetaAccessor: generateName and name with `nameFn`, namespace per scope, then the common checks.
function validateObjectMetaAccessor(meta: ObjectMeta, opts: ObjectMetaValidationOptions, nameFn: NameValidator): FieldError[] {
  const errs: FieldError[] = [];
  if (meta.generateName) {
    for (const msg of nameFn(meta.generateName, true)) errs.push(invalid(META.generateName, meta.generateName, msg));
  }
  if (!meta.name) {
    // The registry generates the name from generateName before validating, so only a request with neither is
    // missing one (kube checks the generated name; a bad generateName is reported on its own field either way).
    if (!meta.generateName) errs.push(required(META.name, 'name or generateName is required'));
  } else {
    for (const msg of nameFn(meta.name, false)) errs.push(invalid(META.name, meta.name, msg));
  }

  if (opts.namespaced) {
    if (!meta.namespace) errs.push(required(META.namespace));
    else for (const msg of nameIsDNSLabel(meta.namespace, false)) errs.push(invalid(META.namespace, meta.namespace, msg));
  } else if (meta.namespace) {
    errs.push(forbidden(META.namespace, 'not allowed on this type'));
  }

  if (typeof meta.generation === 'number' && meta.generation < 0) {
    errs.push(invalid(META.generation, meta.generation, 'must be greater than or equal to 0'));
  }
  errs.push(
    ...validateLabels(meta.labels, META.labels),
    ...validateAnnotations(meta.annotations, META.annotations),
    ...validateOwnerReferences(meta.ownerReferences, META.ownerReferences),
    ...validateFinalizers(meta.finalizers, META.finalizers),
  );
  return errs;
}

/**
 * validateObjectMetaCreate validates metadata of an object being created, as a custom resource's strategy does
 * (ValidateObjectMeta with NameIsDNSSubdomain): name (or generateName), namespace per scope, generation, labels,
 * annotations, ownerReferences and finalizers. The name is generated before this runs.
 */
export function validateObjectMetaCreate(meta: ObjectMeta, opts: ObjectMetaValidationOptions): FieldError[] {
  return validateObjectMetaAccessor(meta, opts, nameIsDNSSubdomain);
}

// Unset and empty are the same to Go's plain string fields; pointers compare by value (apiequality.Semantic).
const sameValue = (a: unknown, b: unknown) => (a ?? '') === (b ?? '');

// ValidateObjectMetaAccessorUpdate (apimachinery pkg/api/validation/objectmeta.go), without the checks that cannot
// fail after rest.BeforeUpdate (generation is reset to the old one, the resourceVersion is always set).
function validateObjectMetaAccessorUpdate(newMeta: ObjectMeta, oldMeta: ObjectMeta): FieldError[] {
  const errs: FieldError[] = [];
  if (oldMeta.deletionTimestamp) {
    const old = new Set(oldMeta.finalizers ?? []);
    const added = [...new Set((newMeta.finalizers ?? []).filter((f) => !old.has(f)))].sort();
    if (added.length > 0) {
      errs.push(forbidden(META.finalizers, `no new finalizers can be added if the object is being deleted, found new finalizers ${goStringSlice(added)}`));
    }
  }
  for (const name of ['name', 'namespace', 'uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds'] as const) {
    if (!sameValue(newMeta[name], oldMeta[name])) errs.push(invalid(META[name], newMeta[name] ?? null, FIELD_IMMUTABLE_ERROR_MSG));
  }
  errs.push(
    ...validateLabels(newMeta.labels, META.labels),
    ...validateAnnotations(newMeta.annotations, META.annotations),
    ...validateOwnerReferences(newMeta.ownerReferences, META.ownerReferences),
  );
  return errs;
}

/**
 * validateObjectMetaUpdate validates metadata on update exactly as kube-apiserver does for a custom resource, whose
 * errors it reports in this order: rest.ValidateUpdate's common fields (ValidateObjectMetaAccessor with the
 * path-segment name check, then ValidateObjectMetaAccessorUpdate), then the strategy's own
 * ValidateObjectMetaUpdate (customresource validator.go), which repeats the update checks — so a bad label appears
 * three times among the causes and once in the message. It expects rest.BeforeUpdate's normalisation first (the
 * old generation, creationTimestamp and deletionTimestamp, an empty uid filled from the old object).
 */
export function validateObjectMetaUpdate(newMeta: ObjectMeta, oldMeta: ObjectMeta, opts: ObjectMetaValidationOptions): FieldError[] {
  const update = validateObjectMetaAccessorUpdate(newMeta, oldMeta);
  return [...validateObjectMetaAccessor(newMeta, opts, nameIsPathSegment), ...update, ...update];
}

const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
/** GENERATED_NAME_RANDOM_LENGTH is how many random characters generateName appends. */
export const GENERATED_NAME_RANDOM_LENGTH = 5;
/** MAX_GENERATED_NAME_PREFIX_LENGTH is how much of generateName is kept (63 - 5), as names.SimpleNameGenerator does. */
export const MAX_GENERATED_NAME_PREFIX_LENGTH = 63 - GENERATED_NAME_RANDOM_LENGTH;

/** generateNameSuffix returns 5 random characters from Kubernetes' vowel-free alphabet (no accidental words, no 0/1/3). */
export function generateNameSuffix(): string {
  let s = '';
  for (let i = 0; i < GENERATED_NAME_RANDOM_LENGTH; i++) s += NAME_ALPHABET[randomInt(NAME_ALPHABET.length)];
  return s;
}

/** generateName returns `prefix` (cut to 58 characters) followed by a random suffix, so the result fits a 63-character label. */
export function generateName(prefix: string): string {
  return prefix.slice(0, MAX_GENERATED_NAME_PREFIX_LENGTH) + generateNameSuffix();
}
