/**
 * @module kinds/crd/go-format
 * How Go's fmt prints a decoded JSON value with %v and names its type with %T (the types encoding/json and
 * unstructured decoding produce: string, int64 or float64, bool, map[string]interface {}, []interface {}, nil),
 * for kube messages that embed them (unstructured accessor errors).
 */

/** goTypeName is %T of a value decoded from JSON by unstructured (integers are int64). */
export function goTypeName(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'float64';
  if (Array.isArray(v)) return '[]interface {}';
  return 'map[string]interface {}';
}

/** goValueString is %v of such a value: maps with sorted keys as map[k:v], slices as [a b], nil as <nil>. */
export function goValueString(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return String(v);
  if (typeof v === 'number') return goFloat(v);
  if (Array.isArray(v)) return `[${v.map(goValueString).join(' ')}]`;
  const o = v as Record<string, unknown>;
  return `map[${Object.keys(o).sort().map((k) => `${k}:${goValueString(o[k])}`).join(' ')}]`;
}

// goFloat is %v of a float64 (strconv 'g' with the shortest repr, exponent past 21 digits) or of an int64.
function goFloat(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return String(n);
  const abs = Math.abs(n);
  if (abs !== 0 && (abs < 1e-4 || abs >= 1e21)) {
    const [m, e] = n.toExponential().split('e');
    const exp = Number(e);
    return `${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  return String(n);
}
