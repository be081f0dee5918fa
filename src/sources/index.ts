export { fromTokens, type ChatCompletionChunkLike, type ChatCompletionChoiceLike, type MessageChunkLike, type MessageContentBlockLike, type TokenItem } from './fromTokens.js';
export { fromReadable, type FromReadableOptions } from './fromReadable.js';
export { fromFile, fromStdin, type FromFileOptions } from './fromFile.js';
