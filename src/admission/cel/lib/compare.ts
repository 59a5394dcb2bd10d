/**
 * @module admission/cel/lib/compare
 * Equality and ordering of CEL values for the list and set functions (cel-go's Equal and Compare): numbers
 * compare across int, uint and double; lists and maps by their elements.
 */
import { isCelList, isCelMap, isCelUint, type CelValue } from '@bufbuild/cel';

function numeric(v: unknown): number | bigint | undefined {
  if (typeof v === 'bigint' || typeof v === 'number') return v;
  if (isCelUint(v)) return v.value;
  return undefined;
}

/** celEquals is CEL's `==` on two values. */
export function celEquals(a: CelValue, b: CelValue): boolean {
  const na = numeric(a);
  const nb = numeric(b);
  // biome-ignore lint/suspicious/noDoubleEquals: CEL compares int, uint and double by value across number and bigint (1n == 1), which === would not
  if (na !== undefined && nb !== undefined) return na == nb;
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.from(a).equals(Buffer.from(b));
  if (isCelList(a) && isCelList(b)) {
    if (a.size !== b.size) return false;
    for (let i = 0; i < a.size; i++) if (!celEquals(a.get(i)!, b.get(i)!)) return false;
    return true;
  }
  if (isCelMap(a) && isCelMap(b)) {
    if (a.size !== b.size) return false;
    for (const [k, v] of a) {
      const w = b.get(k);
      if (w === undefined || !celEquals(v, w)) return false;
    }
    return true;
  }
  return a === b;
}

/** celLess orders ints, uints, doubles, strings, bools and bytes; other types have no order. */
export function celLess(a: CelValue, b: CelValue): boolean {
  const na = numeric(a);
  const nb = numeric(b);
  if (na !== undefined && nb !== undefined) return na < nb;
  if (typeof a === 'string' && typeof b === 'string') return Buffer.compare(Buffer.from(a), Buffer.from(b)) < 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return !a && b;
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.compare(Buffer.from(a), Buffer.from(b)) < 0;
  throw new Error('no such overload');
}
