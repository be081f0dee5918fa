/** The browser stand-in for `all.ts` (package.json "browser"): no table up front, each loaded when used (`../language-tables.ts`). */
export {};
