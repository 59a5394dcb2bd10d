/**
 * @module admission/cel/env
 * The one @bufbuild/cel environment every rule runs in: the standard library, cel-go's strings extension
 * (kube 1.37's: format and quote, no string reverse), cel-go's lists extension, and the Kubernetes libraries;
 * `matches` goes through the RE2 translation so it agrees with find/findAll.
 */
import { celEnv } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { listFuncs, optionalFuncs, regexFuncs, setFuncs } from './lib/collections.js';
import { conversionFuncs } from './lib/conversions.js';
import { listsExtFuncs } from './lib/lists-ext.js';
import { miscFuncs } from './lib/misc.js';
import { netFuncs } from './lib/net.js';
import { quantityFuncs } from './lib/quantity.js';
import { compileRe2 } from './lib/re2.js';
import { pairsFunc } from './rewrite.js';

/** stringsV2 drops what cel-go's strings extension added after kube's version (string reverse). */
const stringsV2 = [...strings].filter((f) => f.name !== 'reverse');

export const ruleEnv = celEnv({
  variables: {},
  funcs: [
    ...stringsV2,
    ...listFuncs,
    ...setFuncs,
    ...regexFuncs,
    ...optionalFuncs,
    ...quantityFuncs,
    ...netFuncs,
    ...miscFuncs,
    ...listsExtFuncs,
    ...conversionFuncs,
    pairsFunc,
  ],
  re2: { compile: (p: string) => compileRe2(p) },
});
