/**
 * The docs link only to what exists: every relative link or image in README.md, manifests/README.md and docs/**
 * names a file or folder of the repository, and every `#anchor` into a Markdown file (or into the doc itself) names
 * one of its headings, as GitHub turns a heading into an anchor. A section moved or renamed fails here before a
 * reader follows a dead link.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, userDocs } from './helpers/docs.js';

const ROOT = REPO_ROOT;

const docs = userDocs;

/** The lines of a Markdown file, those of fenced code blocks blanked (a `#` there is no heading). */
function outsideFences(text: string): string[] {
  const lines: string[] = [];
  let fence: string | undefined;
  for (const line of text.split('\n')) {
    const m = /^ {0,3}(```+|~~~+)/.exec(line);
    if (m) {
      if (fence === undefined) fence = m[1];
      else if (m[1]?.startsWith(fence)) fence = undefined;
      lines.push('');
      continue;
    }
    lines.push(fence === undefined ? line : '');
  }
  return lines;
}

/** The Markdown outside code blocks and code spans (where brackets are not links). */
function prose(text: string): string {
  return outsideFences(text)
    .map((l) => l.replace(/(`+)[^`]*?\1/g, ''))
    .join('\n');
}

/** Link targets: inline links and images `[text](target "title")`, and reference definitions `[id]: target`. */
function links(text: string): string[] {
  const p = prose(text);
  const inline = [...p.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1] as string);
  const refs = [...p.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((m) => m[1] as string);
  return [...inline, ...refs];
}

/** GitHub's anchor of a heading (github-slugger): its text lower-cased, punctuation dropped, spaces as dashes. */
function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link or image: its text
    .replace(/`([^`]*)`/g, '$1') // code spans: their text
    .replace(/<[^>]+>/g, '') // inline HTML
    .replace(/(\*\*|__|\*|_)(\S(?:.*?\S)?)\1/g, '$2'); // emphasis
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor of a Markdown file's headings, a repeated one with -1, -2… as GitHub numbers them. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of outsideFences(text)) {
    const m = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1] as string);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

describe('slug', () => {
  it('turns headings into the anchors GitHub gives them', () => {
    expect(slug('Storage on etcd (several replicas)')).toBe('storage-on-etcd-several-replicas');
    expect(slug('The e2e suite (`test/e2e/`)')).toBe('the-e2e-suite-teste2e');
    expect(slug('The `npm test` suites (2,550 tests, about 9 minutes)')).toBe('the-npm-test-suites-2550-tests-about-9-minutes');
    expect(slug('Install with Helm')).toBe('install-with-helm');
    expect(slug('What v1 changed — and why')).toBe('what-v1-changed--and-why');
    expect([...anchors('# A\n\n```sh\n# not a heading\n```\n\n## A\n## B_c\n')]).toEqual(['a', 'a-1', 'b_c']);
  });
});

describe.each(docs())('%s', (doc) => {
  const text = readFileSync(join(ROOT, doc), 'utf8');

  it('links only to files that exist and to headings they have', () => {
    const dead: string[] = [];
    for (const target of links(text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:…
      const hash = target.indexOf('#');
      const path = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
      const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
      const file = path === '' ? join(ROOT, doc) : resolve(dirname(join(ROOT, doc)), path);
      if (relative(ROOT, file).startsWith('..') || !existsSync(file)) {
        dead.push(`${target}: no such file`);
        continue;
      }
      if (anchor !== undefined && file.endsWith('.md') && !anchors(readFileSync(file, 'utf8')).has(anchor)) {
        dead.push(`${target}: no heading with that anchor in ${relative(ROOT, file)}`);
      }
    }
    expect(dead).toEqual([]);
  });
});
