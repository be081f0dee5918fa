export { fromTokens, type ChatCompletionChunkLike, type ChatCompletionChoiceLike, type TokenItem } from './fromTokens.js';
export { fromReadable, type FromReadableOptions } from './fromReadable.js';
export { fromFile, fromStdin, type FromFileOptions } from './fromFile.js';
