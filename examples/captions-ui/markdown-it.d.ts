// The part of markdown-it's API the pages use (the package ships no types).
declare module 'markdown-it' {
  export default class MarkdownIt {
    constructor(options?: { html?: boolean; linkify?: boolean });
    render(markdown: string): string;
  }
}
