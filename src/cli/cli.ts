/**
 * The `sentinel` process: run the command line and exit with its code (bin/sentinel.mjs loads this file). Exits
 * explicitly so kept-alive sockets never hold the process; stdout and stderr are synchronous on pipes and files.
 */
import { runCli } from './main.js';

process.exit(await runCli(process.argv.slice(2), process.env));
