/**
 * @module discovery/openapi-accept
 * The Accept negotiation of kube-openapi's `/openapi/v2` and `/openapi/v3/<gv>` handlers (handler/handler.go,
 * handler3/handler.go): an empty header is `*∕*`; clauses are ordered as github.com/munnerz/goautoneg ParseAccept
 * orders them; the first clause whose type and subtype (or `*`) match an offer, tried in the handler's order, wins.
 * Parameters are ignored and q=0 does not exclude a clause (goautoneg keeps it); nothing matching means 406.
 */

/** AcceptClause is one goautoneg clause: type, subtype and quality (case kept, as goautoneg keeps it). */
export interface AcceptClause {
  type: string;
  subtype: string;
  q: number;
}

// Go's strconv.ParseFloat on the raw text after `q=`; goautoneg ignores the error, leaving 0.
const GO_FLOAT = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const parseQ = (raw: string) => (GO_FLOAT.test(raw) ? Number(raw) : 0);

// goautoneg's accept_slice.Less, including its quirk: it never answers false on a lower q first.
const less = (a: AcceptClause, b: AcceptClause) => a.q > b.q || (a.type !== '*' && b.type === '*') || (a.subtype !== '*' && b.subtype === '*');

/** goautonegClauses parses an Accept header into clauses sorted the way goautoneg.ParseAccept sorts them. */
export function goautonegClauses(header: string): AcceptClause[] {
  const clauses: AcceptClause[] = [];
  for (const part of header.split(',')) {
    const [range = '', ...params] = part.replace(/^ +| +$/g, '').split(';');
    const sp = range.split('/');
    const type = (sp[0] ?? '').replace(/^ +| +$/g, '');
    let subtype: string;
    if (sp.length === 1 && type === '*') subtype = '*';
    else if (sp.length === 2) subtype = (sp[1] ?? '').replace(/^ +| +$/g, '');
    else continue;
    let q = 1;
    for (const p of params) {
      const eq = p.indexOf('=');
      if (eq >= 0 && p.slice(0, eq).replace(/^ +| +$/g, '') === 'q') q = parseQ(p.slice(eq + 1));
    }
    clauses.push({ type, subtype, q });
  }
  // sort.Sort on so few clauses is Go's insertion sort; doing the same keeps the order identical even where Less is inconsistent.
  for (let i = 1; i < clauses.length; i++) {
    for (let j = i; j > 0 && less(clauses[j]!, clauses[j - 1]!); j--) [clauses[j], clauses[j - 1]] = [clauses[j - 1]!, clauses[j]!];
  }
  return clauses;
}

/** OpenApiOffer is one representation a handler can serve, as `type/subtype`, with what it is called internally. */
export interface OpenApiOffer<F extends string> {
  type: string;
  subtype: string;
  format: F;
}

/** negotiateOpenApi picks the offer kube-openapi would serve for an Accept header; undefined means 406. */
export function negotiateOpenApi<F extends string>(accept: string | undefined, offers: readonly OpenApiOffer<F>[]): F | undefined {
  for (const clause of goautonegClauses(accept || '*/*')) {
    for (const offer of offers) {
      if (clause.type !== offer.type && clause.type !== '*') continue;
      if (clause.subtype !== offer.subtype && clause.subtype !== '*') continue;
      return offer.format;
    }
  }
  return undefined;
}
