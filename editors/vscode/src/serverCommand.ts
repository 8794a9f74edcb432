/**
 * Pure logic of the extension: settings -> how to start the server, settings -> what the
 * server is sent, and where the entry under the cursor starts.
 *
 * This module must not import `vscode`: it is unit-tested with node's built-in test runner.
 */
import * as path from 'node:path';

/** Which derivls runs: the copy the extension carries (bundled/libs) or the one installed in the Python environment. */
export type ImportStrategy = 'useBundled' | 'fromEnvironment';

/** The `derivls.server.*` settings and `derivls.importStrategy`. Empty strings mean "not set". */
export interface ServerLaunchSettings {
  path?: string;
  python?: string;
  importStrategy?: string;
}

/** Facts about the machine the extension runs on, passed in so the logic stays testable. */
export interface LaunchContext {
  platform: NodeJS.Platform;
  home: string;
  /** First workspace folder (file system path), if any: base for relative paths and `${workspaceFolder}`. */
  workspaceFolder?: string;
  env: Record<string, string | undefined>;
  /** Interpreter selected in the Python extension (ms-python.python), when that extension is present. */
  pythonExtensionInterpreter?: string;
  /**
   * Working directory for the server and its probe: a folder the workspace does not control (the
   * extension's own folder), never the workspace folder, so nothing there can shadow a Python module.
   */
  neutralCwd?: string;
  /**
   * The bundled server's launcher (`<extension>/bundled/derivls_server.py`), when the extension carries one
   * (a development build without `npm run bundle` does not): `useBundled` needs it.
   */
  bundledLauncher?: string;
}

/** One way to start the server, with a cheap command that tells whether it can work. */
export interface ServerCandidate {
  command: string;
  args: string[];
  /** Which setting (or default) this candidate comes from; shown in messages. */
  origin: 'derivls.server.path' | 'derivls.server.python' | 'Python extension interpreter' | 'default python' | 'PATH';
  /** The probe: exits 0 when the candidate can start the server. `undefined` = only check the executable exists. */
  probe?: { command: string; args: string[] };
  /** How the candidate is named in messages (the Python candidates' bootstrap code is left out). */
  display: string;
  /** Runs the server the extension carries (its version is the extension's). */
  bundled?: boolean;
}

export const SERVE_ARGS: readonly string[] = ['serve'];

/**
 * Python code that drops the current directory ('' or '.') from sys.path before anything is
 * imported from it. `python -c` puts '' first on sys.path (`python -m` would put the working
 * directory there), so a folder with a `derivls/`, `yaml/`, `pygls/`, `asyncio/`… would otherwise
 * run its code; this is what `-P` does on Python 3.11+, and it also works on 3.10.
 */
export const SAFE_PATH = "import sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')]";

/** `python -c BOOT serve` runs `python -m derivls serve` with the safe sys.path. */
export const PYTHON_BOOT = `${SAFE_PATH}; import runpy; runpy.run_module('derivls', run_name='__main__', alter_sys=True)`;

/** The probe: imports derivls the way the server will, without running anything from the working directory. */
export const PYTHON_PROBE = `${SAFE_PATH}; import derivls`;

/** Expands `~`, `${userHome}`, `${workspaceFolder}` and `${env:NAME}`; relative paths are resolved against the workspace folder. */
export function expandPath(raw: string, ctx: Pick<LaunchContext, 'home' | 'workspaceFolder' | 'env' | 'platform'>): string {
  let p = raw.trim();
  if (p === '') {
    return p;
  }
  p = p.replace(/\$\{userHome\}/g, ctx.home);
  p = p.replace(/\$\{env:([^}]+)\}/g, (_m, name: string) => ctx.env[name] ?? '');
  if (ctx.workspaceFolder !== undefined) {
    p = p.replace(/\$\{workspaceFolder\}/g, ctx.workspaceFolder);
  }
  if (p === '~') {
    p = ctx.home;
  } else if (p.startsWith('~/') || (ctx.platform === 'win32' && p.startsWith('~\\'))) {
    p = pathFor(ctx.platform).join(ctx.home, p.slice(2));
  }
  const lib = pathFor(ctx.platform);
  if (!lib.isAbsolute(p) && hasSeparator(p, ctx.platform) && ctx.workspaceFolder !== undefined) {
    p = lib.resolve(ctx.workspaceFolder, p);
  }
  return p;
}

function pathFor(platform: NodeJS.Platform): path.PlatformPath {
  return platform === 'win32' ? path.win32 : path.posix;
}

function hasSeparator(p: string, platform: NodeJS.Platform): boolean {
  return p.includes('/') || (platform === 'win32' && p.includes('\\'));
}

function defaultPython(platform: NodeJS.Platform): string {
  return platform === 'win32' ? 'python' : 'python3';
}

/** The Pythons tried for the bundled server when none is chosen, best first: [command, leading args]. */
function defaultPythons(platform: NodeJS.Platform): [string, string[]][] {
  return platform === 'win32'
    ? [
        ['python', []],
        ['py', ['-3']],
      ]
    : [
        ['python3', []],
        ['python', []],
      ];
}

/**
 * `<python> -I <launcher> serve`: `-I` keeps the working directory, the script's folder, PYTHONPATH and the
 * user's site-packages off sys.path, and the launcher puts bundled/libs first (bundled/derivls_server.py).
 * The probe (`--version`) fails with a clear message on a Python older than 3.10.
 */
function bundledCandidate(
  python: string,
  lead: string[],
  launcher: string,
  origin: ServerCandidate['origin'],
): ServerCandidate {
  const run = [...lead, '-I', launcher];
  return {
    command: python,
    args: [...run, ...SERVE_ARGS],
    origin,
    probe: { command: python, args: [...run, '--version'] },
    display: [python, ...run, ...SERVE_ARGS].join(' '),
    bundled: true,
  };
}

export function importStrategy(settings: ServerLaunchSettings): ImportStrategy {
  return settings.importStrategy === 'fromEnvironment' ? 'fromEnvironment' : 'useBundled';
}

function pythonCandidate(python: string, origin: ServerCandidate['origin']): ServerCandidate {
  return {
    command: python,
    args: ['-c', PYTHON_BOOT, ...SERVE_ARGS],
    origin,
    probe: { command: python, args: ['-c', PYTHON_PROBE] },
    display: [python, '-m', 'derivls', ...SERVE_ARGS].join(' '),
  };
}

function executableCandidate(exe: string, origin: ServerCandidate['origin']): ServerCandidate {
  return { command: exe, args: [...SERVE_ARGS], origin, display: [exe, ...SERVE_ARGS].join(' ') };
}

/**
 * The ways to start the server, best first.
 *
 * - `derivls.server.path` set: only that executable (`<path> serve`), whatever the import strategy.
 * - `useBundled` (the default, when the extension carries its server): the bundled server run by
 *   `derivls.server.python` if set, else by the Python extension's interpreter, then `python3`, `python`
 *   (`python`, `py -3` on Windows): the first that is Python >= 3.10.
 * - `fromEnvironment`: `derivls.server.python` set: only `<python> -m derivls serve`; else the Python
 *   extension's interpreter if there is one, otherwise `python3` (`python` on Windows), then a `derivls`
 *   executable on PATH (for pipx-style installs).
 */
export function serverCandidates(settings: ServerLaunchSettings, ctx: LaunchContext): ServerCandidate[] {
  const exe = (settings.path ?? '').trim();
  if (exe !== '') {
    return [executableCandidate(expandPath(exe, ctx), 'derivls.server.path')];
  }
  const python = (settings.python ?? '').trim();
  const launcher = ctx.bundledLauncher;
  if (importStrategy(settings) === 'useBundled' && launcher !== undefined) {
    if (python !== '') {
      return [bundledCandidate(expandPath(python, ctx), [], launcher, 'derivls.server.python')];
    }
    const candidates: ServerCandidate[] = [];
    const fromExtension = ctx.pythonExtensionInterpreter?.trim();
    if (fromExtension) {
      candidates.push(bundledCandidate(fromExtension, [], launcher, 'Python extension interpreter'));
    }
    for (const [command, lead] of defaultPythons(ctx.platform)) {
      candidates.push(bundledCandidate(command, lead, launcher, 'default python'));
    }
    return candidates;
  }
  if (python !== '') {
    return [pythonCandidate(expandPath(python, ctx), 'derivls.server.python')];
  }
  const candidates: ServerCandidate[] = [];
  const fromExtension = ctx.pythonExtensionInterpreter?.trim();
  if (fromExtension) {
    candidates.push(pythonCandidate(fromExtension, 'Python extension interpreter'));
  } else {
    candidates.push(pythonCandidate(defaultPython(ctx.platform), 'default python'));
  }
  candidates.push(executableCandidate(ctx.platform === 'win32' ? 'derivls.exe' : 'derivls', 'PATH'));
  return candidates;
}

/** Looks an executable up the way a shell would: a name with a separator is taken as a path, else searched on PATH. */
export function findExecutable(
  command: string,
  ctx: Pick<LaunchContext, 'platform' | 'env'>,
  isExecutableFile: (p: string) => boolean,
): string | undefined {
  const lib = pathFor(ctx.platform);
  const exts =
    ctx.platform === 'win32'
      ? ['', ...(ctx.env.PATHEXT ?? '.COM;.EXE;.BAT;.CMD').split(';').filter((e) => e !== '')]
      : [''];
  const tryAll = (base: string): string | undefined => {
    for (const ext of exts) {
      if (isExecutableFile(base + ext)) {
        return base + ext;
      }
    }
    return undefined;
  };
  if (lib.isAbsolute(command) || hasSeparator(command, ctx.platform)) {
    return tryAll(command);
  }
  const pathVar = (ctx.platform === 'win32' ? (ctx.env.Path ?? ctx.env.PATH) : ctx.env.PATH) ?? '';
  for (const dir of pathVar.split(ctx.platform === 'win32' ? ';' : ':')) {
    if (dir === '') {
      continue;
    }
    const found = tryAll(lib.join(dir, command));
    if (found !== undefined) {
      return found;
    }
  }
  return undefined;
}

/** What went wrong with one candidate. */
export interface CandidateFailure {
  candidate: ServerCandidate;
  reason: string;
}

/** The error shown when no candidate works: what was tried, and how to fix it. */
export function noServerMessage(failures: CandidateFailure[]): string {
  const tried = failures
    .map((f) => `\`${f.candidate.display}\` (${f.candidate.origin}): ${f.reason}`)
    .join('; ');
  const explicitPath = failures.some((f) => f.candidate.origin === 'derivls.server.path');
  const bundled = failures.length > 0 && failures.every((f) => f.candidate.bundled === true);
  const fix = explicitPath
    ? 'Fix: point "derivls.server.path" at an existing derivls executable, or clear it to use a Python interpreter.'
    : bundled
      ? 'Fix: the server comes with the extension and needs only a Python 3.10 or newer: install one, ' +
        'or set "derivls.server.python" to one (or select it in the Python extension).'
      : 'Fix: install derivls into that Python from a clone of its repository (`python3 -m pip install /path/to/derivls`; ' +
        'it is not on the package index yet), set "derivls.server.python" ' +
        'to a Python that has it or "derivls.server.path" to a derivls executable, ' +
        'or set "derivls.importStrategy" to "useBundled" to run the server that comes with the extension.';
  return `derivls: cannot start the language server. Tried ${tried}. ${fix}`;
}

/** The `derivls.*` settings the server reads (every one is sent; a change of any is sent again). */
export const SERVER_SETTING_KEYS = [
  'nativeFunctions',
  'tags',
  'profile',
  'torchVersion',
  'torchInclude',
  'functionsManual',
  'compileOnSave',
  'compileCxx',
  'compileTorchInclude',
  'gradcheckOnSave',
  'gradcheckPython',
] as const;

/**
 * The server's settings as `get` (VS Code's `WorkspaceConfiguration.get`) has them: every key of
 * SERVER_SETTING_KEYS is read here, so each one is sent (initializationOptions, workspace/configuration,
 * didChangeConfiguration). Kept out of extension.ts so that a unit test can hold the two lists together.
 */
export function readServerSettings(get: <T>(key: string, fallback: T) => T): RawServerSettings {
  return {
    nativeFunctions: get('nativeFunctions', ''),
    tags: get('tags', ''),
    profile: get('profile', 'auto'),
    torchVersion: get('torchVersion', 'auto'),
    torchInclude: get('torchInclude', ''),
    functionsManual: get('functionsManual', ''),
    compileOnSave: get('compileOnSave', false),
    compileCxx: get('compileCxx', ''),
    compileTorchInclude: get('compileTorchInclude', ''),
    gradcheckOnSave: get('gradcheckOnSave', false),
    gradcheckPython: get('gradcheckPython', ''),
  };
}

/** The `derivls.*` settings the server reads, as VS Code has them. */
export interface RawServerSettings {
  nativeFunctions?: string;
  tags?: string;
  profile?: string;
  torchVersion?: string;
  torchInclude?: string;
  functionsManual?: string;
  compileOnSave?: boolean;
  compileCxx?: string;
  compileTorchInclude?: string;
  gradcheckOnSave?: boolean;
  gradcheckPython?: string;
}

export type Profile = 'auto' | 'torchgen' | 'legacy';

export interface ServerSettingsPayload {
  nativeFunctions: string;
  tags: string;
  profile: Profile;
  torchVersion: string;
  torchInclude: string;
  functionsManual: string;
  compileOnSave: boolean;
  compileCxx: string;
  compileTorchInclude: string;
  gradcheckOnSave: boolean;
  gradcheckPython: string;
}

const PROFILES: readonly string[] = ['auto', 'torchgen', 'legacy'];

/**
 * The settings object sent to the server (initializationOptions, workspace/configuration
 * answers and didChangeConfiguration): paths expanded, an unknown profile replaced by `auto`,
 * an empty `torchVersion` sent as `auto` (the server checks the version and warns about a bad one).
 * Unset paths are sent as `""` (not left out) so that clearing a setting resets it on the server.
 * `compileCxx` is a path or a command looked up on PATH (a bare name is left as it is).
 */
export function serverSettings(raw: RawServerSettings, ctx: Pick<LaunchContext, 'home' | 'workspaceFolder' | 'env' | 'platform'>): ServerSettingsPayload {
  const torchVersion = (raw.torchVersion ?? '').trim();
  return {
    nativeFunctions: expandPath(raw.nativeFunctions ?? '', ctx),
    tags: expandPath(raw.tags ?? '', ctx),
    profile: PROFILES.includes(raw.profile ?? '') ? (raw.profile as Profile) : 'auto',
    torchVersion: torchVersion === '' ? 'auto' : torchVersion,
    torchInclude: expandPath(raw.torchInclude ?? '', ctx),
    functionsManual: expandPath(raw.functionsManual ?? '', ctx),
    compileOnSave: raw.compileOnSave === true,
    compileCxx: expandPath(raw.compileCxx ?? '', ctx),
    compileTorchInclude: expandPath(raw.compileTorchInclude ?? '', ctx),
    gradcheckOnSave: raw.gradcheckOnSave === true,
    gradcheckPython: expandPath(raw.gradcheckPython ?? '', ctx),
  };
}

/** True for the files derivls handles (by base name, any directory). */
export function isDerivlsFile(fsPath: string): boolean {
  const base = fsPath.split(/[\\/]/).pop() ?? '';
  return base === 'derivatives.yaml' || base === 'native_functions.yaml';
}

const ENTRY_START = /^-\s+name\s*:/;

/**
 * The 0-based line of the `- name:` that starts the derivatives.yaml entry containing `line`,
 * or `undefined` when the line is not inside an entry.
 */
export function entryLineAt(lines: readonly string[], line: number): number | undefined {
  if (line < 0 || line >= lines.length) {
    return undefined;
  }
  for (let i = line; i >= 0; i--) {
    const text = lines[i];
    if (ENTRY_START.test(text)) {
      return i;
    }
    // Another top-level item that is not an entry start ends the search.
    if (i !== line && /^-\s/.test(text)) {
      return undefined;
    }
  }
  return undefined;
}

/**
 * The warning shown when the running server is not this extension's version, or undefined when they match.
 * The bundled server always matches (it is built with the extension); an environment's derivls may not:
 * features and settings may differ, so the user is told once per start and may dismiss it.
 */
export function versionMismatchMessage(
  extensionVersion: string,
  serverInfo: { name?: string; version?: string } | undefined,
  candidate: Pick<ServerCandidate, 'display' | 'bundled'>,
): string | undefined {
  const serverVersion = serverInfo?.version;
  if (serverVersion === extensionVersion) {
    return undefined;
  }
  const which = serverVersion === undefined ? 'a derivls that does not say its version' : `derivls ${serverVersion}`;
  const fix = candidate.bundled
    ? 'Reinstall the extension.'
    : 'Set "derivls.importStrategy" to "useBundled" to run the server that comes with the extension, ' +
      `or install derivls ${extensionVersion} into that environment.`;
  return `derivls: the language server (${candidate.display}) is ${which}, this extension is ${extensionVersion}: features and settings may not match. ${fix}`;
}
