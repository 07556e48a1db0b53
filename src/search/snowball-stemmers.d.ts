// snowball-stemmers ships no types: the two functions src/search/snippet.ts uses. Named imports:
// the package is CommonJS marked `__esModule` with no default, which runtimes read differently.
declare module "snowball-stemmers" {
  export function newStemmer(language: string): { stem(word: string): string };
  export function algorithms(): string[];
}
