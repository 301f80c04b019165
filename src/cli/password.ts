/** Reads a password without echo on a terminal (raw mode), or one line from a pipe; SENTINEL_PASSWORD wins. */
export async function readPassword(env: NodeJS.ProcessEnv, prompt: string): Promise<string> {
  if (env.SENTINEL_PASSWORD) return env.SENTINEL_PASSWORD;
  const stdin = process.stdin;
  if (!stdin.isTTY) return readLine(stdin);
  process.stderr.write(prompt);
  stdin.setRawMode(true);
  stdin.resume();
  return new Promise((resolve, reject) => {
    let buf = '';
    const onData = (d: Buffer) => {
      for (const ch of d.toString('utf8')) {
        if (ch === '\r' || ch === '\n') return done(null);
        if (ch === '\u0003') return done(new Error('cancelled'));
        if (ch === '\u007f') buf = buf.slice(0, -1);
        else buf += ch;
      }
    };
    const done = (err: Error | null) => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
      if (err) reject(err);
      else resolve(buf);
    };
    stdin.on('data', onData);
  });
}

function readLine(stream: NodeJS.ReadStream): Promise<string> {
  return new Promise((resolve) => {
    let buf = '';
    const onData = (d: Buffer) => {
      buf += d.toString('utf8');
      const nl = buf.indexOf('\n');
      if (nl >= 0) finish(buf.slice(0, nl));
    };
    const finish = (line: string) => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.pause();
      resolve(line.replace(/\r$/, ''));
    };
    const onEnd = () => finish(buf);
    stream.on('data', onData);
    stream.on('end', onEnd);
  });
}
