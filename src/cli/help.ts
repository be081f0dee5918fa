/**
 * Help texts of `rxvoice` and each of its commands.
 */
import { EXIT_CODES_HELP } from './exit-codes.js';

const ENVIRONMENT = `Environment:
  CAMB_API_KEY             API key of the service (never printed); RXVOICE_API_KEY
                           is read when CAMB_API_KEY is not set
  CAMB_BASE_URL            base address of the service (or RXVOICE_BASE_URL);
                           default https://client.camb.ai/apis, the public service
                           With no key and no address, commands start an embedded
                           emulator (and say so on stderr).
  RXVOICE_EMULATOR_SYNTH   synth of the embedded emulator: espeak or tone (default:
                           espeak if the optional package espeak-ng is installed,
                           else tone, with a warning: npm install espeak-ng for speech)`;

export const MAIN_HELP = `rxvoice: speech and localization from the command line (RxJS inside)

Usage:
  rxvoice <command> [options]

Commands:
  speak "text" | -      speak text (or stdin as a token stream) over a live session
  translate "text"      translate text, streamed to stdout as it arrives
  sound "prompt"        generate a sound effect or music clip (a task)
  voices                list voices
  voice create FILE     create a custom voice from an audio sample
  emulator              run the local emulator of the service until Ctrl-C
  batch JOBS.jsonl      run many task jobs, resumable (the same command again resumes)
  worker --queue URL    process batch jobs from a Redis queue (BullMQ) until Ctrl-C

Options:
  -h, --help            show help (also: rxvoice <command> --help)
  -v, --version         print the version

Output: progress goes to stderr (a spinner on a terminal, plain lines otherwise);
--json prints one JSON object per line on stdout for machines. Errors are one line
on stderr.

${ENVIRONMENT}

${EXIT_CODES_HELP}
`;

export const COMMAND_HELP: Record<string, string> = {
  worker: `Usage:
  rxvoice worker --queue redis://host:6379 --out DIR [options]

Processes batch jobs that \`rxvoice batch --queue\` put on a BullMQ queue, until
SIGINT/SIGTERM; run it on as many machines as you like. The API key is this process's
(CAMB_API_KEY or RXVOICE_API_KEY); the queue never holds it. Each job's task id is written into its
record in the queue as soon as the task exists, so a job whose worker dies is picked up
by another worker, which resumes the task instead of creating it again.

Options:
      --queue URL         Redis address, redis:// or rediss:// (required)
  -o, --out DIR           where this worker writes outputs (required; atomically)
      --concurrency N     jobs at once in this worker (default 4)
      --rate N            most jobs started per second across all workers (default: no limit)
      --retries N         retries of a retryable failure (default 2)
      --unconfirmed M     fail (default) or recreate a job whose creation a dead worker sent
                          without recording the answer
      --lock-ms MS        a silent worker's job goes to another after this (default 30000)
      --queue-name NAME   queue name (default rxvoice-batch)
      --connect-timeout-ms MS  wait for Redis at start (default 5000; then exit 6)
      --json              one JSON object per job event per line on stdout
  -h, --help              show this help

${EXIT_CODES_HELP}
`,
  batch: `Usage:
  rxvoice batch jobs.jsonl --out DIR [options]

Runs the jobs of a JSON Lines file (one job a line: {"kind":"translation","id":"a1",
"request":{...}}; kinds translation, speech, sound, transcription, subtitles, dubbing)
against the service's task endpoints. Each task id is recorded (fsync) in a journal in
DIR before its job waits, so after a crash or Ctrl-C the same command resumes every
recorded task and creates only the jobs the service never received. Outputs are written
atomically to DIR (<id>.json, .wav, .srt or .vtt by kind). A summary table ends it.
One batch per journal at a time: a second run on the same DIR stops at once, naming the
process that holds the journal's lock. A journal that is damaged, or missing while
outputs exist, stops the command before any call (see --repair, --trust-outputs).

Options:
  -o, --out DIR           output directory (required); the journal is DIR/.rxvoice-batch.jsonl
      --concurrency N     jobs at once (default 4)
      --rate N            most creation calls per second (default: no limit)
      --retries N         retries of a retryable failure (default 2; never for
                          PAYMENT_REQUIRED, validation or a task ERROR)
      --journal FILE      journal path (default DIR/.rxvoice-batch.jsonl)
      --unconfirmed M     a job whose creation call a killed run sent but did not record the
                          answer (its task may exist and be paid): fail (default: reported,
                          nothing sent) or recreate (create it again, may pay twice)
      --trust-outputs     when the journal is missing or empty (or knows nothing of a job)
                          and a job's output exists: skip that job if the output is whole
                          (a WAV as long as its header says, JSON that parses, not empty,
                          not an HTML page; others run again) (default: stop before any
                          call, as running it again could pay twice)
      --repair            repair a damaged journal: keep every record that verifies, report
                          the jobs whose records may be lost as unconfirmed (not created
                          again), go on with the rest; the damaged bytes are kept in
                          <journal>.damaged
      --allow-repay       with --repair: create the jobs whose records were lost again
                          (each may then be paid twice)
      --skip-invalid      run the valid lines when some are bad (default: a bad line stops
                          the command before anything runs; each is reported with its number)
      --queue URL         redis://host:port: put the jobs on a BullMQ queue for
                          \`rxvoice worker\` processes instead (needs the bullmq package; no
                          API key needed here), and follow them to the end
      --queue-name NAME   queue name (default rxvoice-batch)
      --connect-timeout-ms MS  wait for Redis at start (default 5000; then exit 6)
      --json              one JSON object per event per line on stdout
  -h, --help              show this help

Progress: a bar on a terminal, one line per job otherwise. The exit code is that of the
first failed job (0 when all succeeded).

${EXIT_CODES_HELP}
`,
  speak: `Usage:
  rxvoice speak "text" -o out.wav [options]
  some-llm | rxvoice speak - -o out.wav      (stdin read as a token stream)

Speaks text over a live speech session: sentences are synthesized as soon as they are
complete, and the audio is written in order.

Options:
  -o, --output FILE       write a WAV file (- for stdout: a WAV stream, see below)
      --play              play through the audio device (aplay, paplay, ffplay, sox play,
                          or afplay on macOS);
                          with -o too, a player that fails does not stop the file: it is
                          finished, then the command exits 1 with the player's error
      --voice ID          voice id (default 1, the documented default voice)
      --language TAG      locale tag of the text (default: en-us)
      --word-timestamps   ask for word timings: under each segment line, one line per word
                          "START END WORD" (seconds in the output audio); with --json,
                          one {"type":"word",segment_id,index,word,start,end} line per word
      --idle-timeout S    seconds of silence before trailing text is flushed
      --speaking-rate R   0.25 to 4
      --resubmit-skipped  push the text of skipped segments again (up to 2 times)
      --links MODE        links: host (default: https://example.com/a is spoken
                          example.com), drop, or verbatim
      --lexicon FILE      pronunciations, JSON: {"words":{"SQL":"sequel"},
                          "rules":[{"match":"/v(\\d+)/","replace":"version $1"}]}
                          (a list of them, each with an optional "language")
      --spoken-form       numbers, money, dates, times and units in words (en, de, es, fr)
      --no-speakable      send the text as it is (by default thoughts, tool calls,
                          markdown, emoji and link addresses are not spoken)
      --json              one JSON object per line on stdout (segments, words, result)
  -h, --help              show this help

One of -o or --play is required. A segment the service skips (synthesis failed) is
reported on stderr; the command then exits 1 with the unspoken text.

With -o - the WAV goes to stdout while it is spoken, before its length is known, so its
header carries 0xFFFFFFFF as the RIFF and data sizes (a stream of unknown length).
Tools that read to the end of the stream take all of it (sox -t wav - out.wav writes a
file with true sizes, after a "Premature EOF" warning); readers that trust the header
(Python's wave module) see 2^31-1 frames. -o FILE writes the true sizes.

${EXIT_CODES_HELP}
`,
  translate: `Usage:
  rxvoice translate --from en-us --to de-de "text"
  echo "text" | rxvoice translate --from en-us --to de-de -

Translates text; the translation is streamed to stdout as it arrives.

Options:
      --from TAG          source language (locale tag)
      --to TAG            target language (locale tag)
      --formality 1|2     formality (1 informal, 2 formal)
      --json              one JSON object per line: {"type":"text","text":...}, then {"type":"done"}
  -h, --help              show this help

${EXIT_CODES_HELP}
`,
  sound: `Usage:
  rxvoice sound "rain on a tin roof" -o rain.wav [--duration 5]
  rxvoice sound "calm piano" --music -o piano.wav

Generates a sound effect (or music with --music) as a task, shows its progress, and
writes the result.

Options:
  -o, --output FILE       where to write the audio (WAV; default: sound.wav)
      --music             music instead of a sound effect
      --duration S        seconds, at most 10 (default 8; ignored for music)
      --json              one JSON object per line (status updates, then the result)
  -h, --help              show this help

${EXIT_CODES_HELP}
`,
  voices: `Usage:
  rxvoice voices [--json]

Lists voices (library and custom) as a table, or one JSON object per line.

Options:
      --json              one JSON object per voice per line
  -h, --help              show this help

${EXIT_CODES_HELP}
`,
  voice: `Usage:
  rxvoice voice create --name NAME --gender 0|1|2|9 sample.wav [options]

Creates a custom voice by cloning an audio sample (.aac, .flac, .mp3, .wav) and prints
its voice id.

Options:
      --name NAME         voice name (required)
      --gender G          0, 1, 2 or 9 (required)
      --description TEXT  short summary of the voice
      --age N             age of the speaker (default 30)
      --language TAG      locale tag of the sample
      --enhance           noise reduction and volume normalization
      --json              print {"voice_id": N} as JSON
  -h, --help              show this help

${EXIT_CODES_HELP}
`,
  emulator: `Usage:
  rxvoice emulator [--port N] [--synth espeak|tone]

Runs the local emulator of the service (HTTP and live WebSocket) until SIGINT/SIGTERM,
then closes cleanly. Prints the base URL, the WebSocket URL and the development key.

Options:
      --port N            TCP port (default 0: a free port)
      --host HOST         interface (default 127.0.0.1)
      --synth S           espeak (real speech) or tone (fast, deterministic). Default:
                          espeak when the optional package espeak-ng is installed,
                          else tone with one warning line (npm install espeak-ng for
                          speech); --synth espeak without it fails at start
      --key KEY           accepted API key (repeatable; default: the development key)
      --credits N         starting credits per key
      --json              print the addresses as one JSON object
  -h, --help              show this help

${EXIT_CODES_HELP}
`,
};
