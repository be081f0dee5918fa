/**
 * A chat-bot answer in markdown, as LLMs write them: headings, emphasis, a list. The page
 * shows it rendered and speaks it without the markup.
 */
export const MARKDOWN_ANSWER = `## Brewing a good cup

A good cup of coffee starts with **fresh beans**. Buy whole beans roasted within the last few weeks, and grind them *just before* you brew.

- Use about sixty grams of coffee per litre of water.
- Keep the water hot but not boiling.

If it tastes bitter, grind a little coarser. Enjoy your coffee!`;
