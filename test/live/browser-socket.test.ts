/**
 * A browser bundle of `speak` holds nothing of `ws` ("browser" in package.json maps
 * `node-socket.ts` to `browser-socket.ts`), and there `speak` without a WebSocket
 * constructor is a typed error when it is called, before any socket. The Node bundle of
 * the same entry is the control: it has `ws`, and its `speak` needs no constructor.
 */
import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ENTRY = "export { speak } from './src/live/index.ts'; export { ValidationError } from './src/core/errors.ts';";

/** The entry bundled for `platform`, with the files it took in. */
async function bundle(platform: 'browser' | 'node'): Promise<{ text: string; inputs: string[] }> {
  const result = await build({
    stdin: { contents: ENTRY, resolveDir: ROOT, loader: 'ts' },
    absWorkingDir: ROOT,
    bundle: true,
    platform,
    format: 'esm',
    metafile: true,
    write: false,
    logLevel: 'silent',
  });
  return { text: result.outputFiles[0]!.text, inputs: Object.keys(result.metafile.inputs) };
}

type Issues = { issues: { loc: (string | number)[] }[] };
type Module = {
  speak: (connection: object, options: object) => unknown;
  ValidationError: new (...args: never[]) => Error & Issues;
};

/** Loads a bundle that imports nothing (the browser one) as a module. */
async function load(text: string): Promise<Module> {
  return (await import(`data:text/javascript;base64,${Buffer.from(text).toString('base64')}`)) as Module;
}

describe('the browser bundle of speak and ws', () => {
  it('takes in browser-socket.ts and no file of ws; the Node bundle takes node-socket.ts and ws (control)', async () => {
    const browser = await bundle('browser');
    const node = await bundle('node');
    expect(browser.inputs).toContain('src/live/browser-socket.ts');
    expect(browser.inputs.filter((file) => file.includes('node_modules/ws/') || file.endsWith('node-socket.ts'))).toEqual([]);
    expect(node.inputs).toContain('src/live/node-socket.ts');
    expect(node.inputs.some((file) => file.includes('node_modules/ws/'))).toBe(true);
    // what ws's errors say (WS_ERR_* codes, a handshake's 404) stays in Node: a browser's error events say nothing
    expect(browser.text).not.toContain('WS_ERR_');
    expect(node.text).toContain('WS_ERR_UNSUPPORTED_MESSAGE_LENGTH');
    expect(browser.text).not.toContain('set the live address');
    expect(node.text).toContain('set the live address');
  });

  it('in the browser bundle, speak without a WebSocket throws a ValidationError at connection.WebSocket when called', async () => {
    const live = await load((await bundle('browser')).text);
    let thrown: unknown;
    try {
      live.speak({ wsUrl: 'ws://127.0.0.1:9/live', apiKey: 'k' }, { voice_id: 1 });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(live.ValidationError);
    expect((thrown as Issues).issues.map((issue) => issue.loc.join('.'))).toEqual(['connection.WebSocket']);
    // with the page's constructor the same call builds the operator
    class PageSocket {}
    expect(typeof live.speak({ wsUrl: 'ws://127.0.0.1:9/live', WebSocket: PageSocket }, { voice_id: 1 })).toBe('function');
  });
});
