/**
 * @module admission/cel/lib/net
 * Kubernetes' ip and cidr libraries: ip(), isIP(), ip.isCanonical(), cidr(), isCIDR() and their methods, on
 * byte addresses parsed as netip.ParseAddr does (no zones, no IPv4-mapped IPv6 for ip()).
 */
import { celFunc, celMethod, CelScalar, type CelFunc, type CelValue } from '@bufbuild/cel';
import { isIP } from 'node:net';
import { kindOf, need, noOverload, opaque } from './opaque.js';

const { DYN, STRING, BOOL, INT } = CelScalar;

function parse4(s: string): number[] | undefined {
  if (isIP(s) !== 4) return undefined;
  const parts = s.split('.');
  if (parts.some((p) => p.length > 1 && p.startsWith('0'))) return undefined;
  return parts.map(Number);
}

function parse6(s: string): number[] | undefined {
  if (isIP(s) !== 6 || s.includes('%')) return undefined;
  let head = s;
  let tail4: number[] = [];
  const lastColon = s.lastIndexOf(':');
  if (s.slice(lastColon + 1).includes('.')) {
    const v4 = parse4(s.slice(lastColon + 1));
    if (!v4) return undefined;
    tail4 = v4;
    head = `${s.slice(0, lastColon + 1)}0:0`;
  }
  const [l, r] = head.includes('::') ? head.split('::') : [head, undefined];
  const ls = l ? l.split(':') : [];
  const rs = r ? r.split(':') : [];
  const fill = r === undefined ? [] : Array(8 - ls.length - rs.length).fill('0');
  const groups = [...ls, ...fill, ...rs].map((g) => parseInt(g, 16));
  const bytes = groups.flatMap((g) => [g >> 8, g & 255]);
  if (tail4.length) bytes.splice(12, 4, ...tail4);
  return bytes;
}

/** parseAddr: bytes (4 or 16) of an address, or undefined. */
export function parseAddr(s: string): number[] | undefined {
  return parse4(s) ?? parse6(s);
}

/** formatAddr prints an address canonically (RFC 5952 for IPv6). */
export function formatAddr(b: number[]): string {
  if (b.length === 4) return b.join('.');
  const g: number[] = [];
  for (let i = 0; i < 16; i += 2) g.push((b[i]! << 8) | b[i + 1]!);
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (g[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = g.map((x) => x.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}

const isMapped4 = (b: number[]) => b.length === 16 && b.slice(0, 10).every((x) => x === 0) && b[10] === 255 && b[11] === 255;

function ipOf(s: string): number[] {
  const b = parseAddr(s);
  if (!b) throw new Error(`IP Address "${s}" parse error during conversion from string: ParseAddr("${s}"): unable to parse IP`);
  if (isMapped4(b)) throw new Error('IPv4-mapped IPv6 address is not allowed');
  return b;
}

function cidrOf(s: string): { ip: number[]; bits: number } {
  // kube wraps netip.ParsePrefix's error in its conversion words twice
  const fail = (why: string) =>
    new Error(
      `network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix(${JSON.stringify(s)}): ${why}`,
    );
  const slash = s.lastIndexOf('/');
  if (slash < 0) throw fail("no '/'");
  const addr = s.slice(0, slash);
  const b = parseAddr(addr);
  if (!b) throw fail(`ParseAddr(${JSON.stringify(addr)}): unable to parse IP`);
  const bitsStr = s.slice(slash + 1);
  const bits = /^(0|[1-9]\d{0,2})$/.test(bitsStr) ? Number(bitsStr) : NaN;
  if (Number.isNaN(bits) || bits > b.length * 8) throw fail(`bad bits after slash: ${JSON.stringify(bitsStr)}`);
  if (isMapped4(b)) throw new Error('IPv4-mapped IPv6 address is not allowed');
  return { ip: b, bits };
}

function mask(b: number[], bits: number): number[] {
  return b.map((x, i) => {
    const keep = Math.max(0, Math.min(8, bits - i * 8));
    return x & ((0xff << (8 - keep)) & 0xff);
  });
}

const ipv = (v: unknown, fn: string) => need(v, 'IP', fn) as unknown as string;
const cidrv = (v: unknown, fn: string) => need(v, 'CIDR', fn) as unknown as string;

function contains(c: { ip: number[]; bits: number }, ip: number[]): boolean {
  if (ip.length !== c.ip.length) return false;
  return mask(ip, c.bits).every((x, i) => x === mask(c.ip, c.bits)[i]);
}

/** ipString / cidrString serve string() of these values. */
export function netString(v: unknown): string | undefined {
  const k = kindOf(v);
  if (k === 'IP') return ipv(v, 'string');
  if (k === 'CIDR') return cidrv(v, 'string');
  return undefined;
}

export const netFuncs: CelFunc[] = [
  celFunc('ip', [STRING], DYN, (s) => opaque('IP', formatAddr(ipOf(s)))),
  celFunc('isIP', [STRING], BOOL, (s) => {
    const b = parseAddr(s);
    return b !== undefined && !isMapped4(b);
  }),
  celFunc('ip.isCanonical', [STRING], BOOL, (s) => formatAddr(ipOf(s)) === s),
  celMethod('family', DYN, [], INT, function () {
    return parseAddr(ipv(this, 'family'))!.length === 4 ? 4n : 6n;
  }),
  celMethod('isUnspecified', DYN, [], BOOL, function () {
    return parseAddr(ipv(this, 'isUnspecified'))!.every((x) => x === 0);
  }),
  celMethod('isLoopback', DYN, [], BOOL, function () {
    const b = parseAddr(ipv(this, 'isLoopback'))!;
    return b.length === 4 ? b[0] === 127 : b.slice(0, 15).every((x) => x === 0) && b[15] === 1;
  }),
  celMethod('isLinkLocalMulticast', DYN, [], BOOL, function () {
    const b = parseAddr(ipv(this, 'isLinkLocalMulticast'))!;
    return b.length === 4 ? b[0] === 224 && b[1] === 0 && b[2] === 0 : b[0] === 0xff && (b[1]! & 0x0f) === 2;
  }),
  celMethod('isLinkLocalUnicast', DYN, [], BOOL, function () {
    const b = parseAddr(ipv(this, 'isLinkLocalUnicast'))!;
    return b.length === 4 ? b[0] === 169 && b[1] === 254 : b[0] === 0xfe && (b[1]! & 0xc0) === 0x80;
  }),
  celMethod('isGlobalUnicast', DYN, [], BOOL, function () {
    const b = parseAddr(ipv(this, 'isGlobalUnicast'))!;
    if (b.length === 4) {
      if (b.every((x) => x === 255) || b.every((x) => x === 0) || b[0] === 127 || b[0]! >= 224) return false;
      return !(b[0] === 169 && b[1] === 254);
    }
    if (b.every((x) => x === 0) || (b.slice(0, 15).every((x) => x === 0) && b[15] === 1) || b[0] === 0xff) return false;
    return !(b[0] === 0xfe && (b[1]! & 0xc0) === 0x80);
  }),
  celFunc('cidr', [STRING], DYN, (s) => {
    const c = cidrOf(s);
    return opaque('CIDR', `${formatAddr(c.ip)}/${c.bits}`);
  }),
  celFunc('isCIDR', [STRING], BOOL, (s) => {
    try {
      cidrOf(s);
      return true;
    } catch {
      return false;
    }
  }),
  celMethod('containsIP', DYN, [DYN], BOOL, function (x) {
    const c = cidrOf(cidrv(this, 'containsIP'));
    const ip = typeof x === 'string' ? ipOf(x) : parseAddr(ipv(x, 'containsIP'))!;
    return contains(c, ip);
  }),
  celMethod('containsCIDR', DYN, [DYN], BOOL, function (x) {
    const c = cidrOf(cidrv(this, 'containsCIDR'));
    const o = typeof x === 'string' ? cidrOf(x) : cidrOf(cidrv(x, 'containsCIDR'));
    return o.bits >= c.bits && contains(c, o.ip);
  }),
  celMethod('ip', DYN, [], DYN, function () {
    const c = cidrOf(cidrv(this, 'ip'));
    return opaque('IP', formatAddr(c.ip));
  }),
  celMethod('masked', DYN, [], DYN, function () {
    const c = cidrOf(cidrv(this, 'masked'));
    return opaque('CIDR', `${formatAddr(mask(c.ip, c.bits))}/${c.bits}`);
  }),
  celMethod('prefixLength', DYN, [], INT, function () {
    return BigInt(cidrOf(cidrv(this, 'prefixLength')).bits);
  }),
  celFunc('string', [DYN], STRING, (v) => {
    const s = netString(v);
    if (s === undefined) throw noOverload('string');
    return s;
  }),
] as CelFunc[];

export type { CelValue };
