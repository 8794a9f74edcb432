import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';

import { chooseServer } from '../probe';
import {
  LaunchContext,
  PYTHON_BOOT,
  PYTHON_PROBE,
  SAFE_PATH,
  SERVER_SETTING_KEYS,
  ServerCandidate,
  entryLineAt,
  expandPath,
  findExecutable,
  isDerivlsFile,
  noServerMessage,
  readServerSettings,
  serverCandidates,
  serverSettings,
  versionMismatchMessage,
} from '../serverCommand';

const linux: LaunchContext = {
  platform: 'linux',
  home: '/home/u',
  workspaceFolder: '/src/pytorch',
  env: { PATH: '/usr/local/bin:/usr/bin', VENV: '/home/u/venv' },
};

describe('serverCandidates', () => {
  it('uses derivls.server.path alone when set', () => {
    const c = serverCandidates({ path: '~/venv/bin/derivls', python: '/usr/bin/python3' }, linux);
    assert.equal(c.length, 1);
    assert.equal(c[0].command, '/home/u/venv/bin/derivls');
    assert.deepEqual(c[0].args, ['serve']);
    assert.equal(c[0].origin, 'derivls.server.path');
    assert.equal(c[0].probe, undefined);
  });

  it('uses derivls.server.python alone when path is empty', () => {
    const c = serverCandidates({ path: '  ', python: '${env:VENV}/bin/python' }, linux);
    assert.equal(c.length, 1);
    assert.equal(c[0].command, '/home/u/venv/bin/python');
    assert.deepEqual(c[0].args, ['-c', PYTHON_BOOT, 'serve']);
    assert.deepEqual(c[0].probe, { command: '/home/u/venv/bin/python', args: ['-c', PYTHON_PROBE] });
    assert.equal(c[0].display, '/home/u/venv/bin/python -m derivls serve');
    assert.equal(c[0].origin, 'derivls.server.python');
  });

  it('defaults to the Python extension interpreter, then derivls on PATH', () => {
    const c = serverCandidates({}, { ...linux, pythonExtensionInterpreter: '/src/pytorch/.venv/bin/python' });
    assert.deepEqual(
      c.map((x) => [x.command, ...x.args]),
      [
        ['/src/pytorch/.venv/bin/python', '-c', PYTHON_BOOT, 'serve'],
        ['derivls', 'serve'],
      ],
    );
    assert.equal(c[0].origin, 'Python extension interpreter');
    assert.equal(c[1].origin, 'PATH');
  });

  it('defaults to python3 without the Python extension', () => {
    const c = serverCandidates({ path: '', python: '' }, linux);
    assert.equal(c[0].command, 'python3');
    assert.equal(c[0].origin, 'default python');
  });

  it('defaults to python and derivls.exe on Windows', () => {
    const c = serverCandidates({}, { ...linux, platform: 'win32', home: 'C:\\Users\\u', workspaceFolder: 'C:\\src' });
    assert.equal(c[0].command, 'python');
    assert.equal(c[1].command, 'derivls.exe');
  });
});

describe('serverCandidates with the bundled server', () => {
  const launcher = '/ext/bundled/derivls_server.py';
  const withBundle: LaunchContext = { ...linux, bundledLauncher: launcher };

  it('runs the bundled server by default with any python found: python3, then python', () => {
    const c = serverCandidates({}, withBundle);
    assert.deepEqual(
      c.map((x) => [x.command, ...x.args]),
      [
        ['python3', '-I', launcher, 'serve'],
        ['python', '-I', launcher, 'serve'],
      ],
    );
    assert.ok(c.every((x) => x.bundled === true && x.origin === 'default python'));
    assert.deepEqual(c[0].probe, { command: 'python3', args: ['-I', launcher, '--version'] });
  });

  it('tries the Python extension interpreter first', () => {
    const c = serverCandidates({ importStrategy: 'useBundled' }, { ...withBundle, pythonExtensionInterpreter: '/v/bin/python' });
    assert.deepEqual(c[0], {
      command: '/v/bin/python',
      args: ['-I', launcher, 'serve'],
      origin: 'Python extension interpreter',
      probe: { command: '/v/bin/python', args: ['-I', launcher, '--version'] },
      display: `/v/bin/python -I ${launcher} serve`,
      bundled: true,
    });
    assert.equal(c.length, 3);
  });

  it('tries python, then py -3 on Windows', () => {
    const launcherWin = 'C:\\ext\\bundled\\derivls_server.py';
    const c = serverCandidates({}, { ...withBundle, platform: 'win32', bundledLauncher: launcherWin });
    assert.deepEqual(
      c.map((x) => [x.command, ...x.args]),
      [
        ['python', '-I', launcherWin, 'serve'],
        ['py', '-3', '-I', launcherWin, 'serve'],
      ],
    );
  });

  it('runs the bundled server with derivls.server.python when set', () => {
    const c = serverCandidates({ python: '~/py/bin/python3.12' }, withBundle);
    assert.deepEqual(c.map((x) => [x.command, ...x.args]), [['/home/u/py/bin/python3.12', '-I', launcher, 'serve']]);
    assert.equal(c[0].origin, 'derivls.server.python');
  });

  it('fromEnvironment runs the environment\'s derivls as before', () => {
    const c = serverCandidates({ importStrategy: 'fromEnvironment' }, withBundle);
    assert.deepEqual(
      c.map((x) => [x.command, ...x.args]),
      [
        ['python3', '-c', PYTHON_BOOT, 'serve'],
        ['derivls', 'serve'],
      ],
    );
    assert.ok(c.every((x) => x.bundled !== true));
    const p = serverCandidates({ importStrategy: 'fromEnvironment', python: '/v/bin/python' }, withBundle);
    assert.deepEqual(p[0].args, ['-c', PYTHON_BOOT, 'serve']);
  });

  it('derivls.server.path wins over both strategies', () => {
    for (const importStrategy of ['useBundled', 'fromEnvironment']) {
      const c = serverCandidates({ path: '/opt/derivls', importStrategy }, withBundle);
      assert.deepEqual(c.map((x) => [x.command, ...x.args]), [['/opt/derivls', 'serve']]);
    }
  });

  it('without a bundled server (a development build) the environment is used', () => {
    assert.deepEqual(serverCandidates({ importStrategy: 'useBundled' }, linux)[0].args, ['-c', PYTHON_BOOT, 'serve']);
  });

  it('says to install a Python when no python can run the bundled server', () => {
    const c = serverCandidates({}, withBundle);
    const msg = noServerMessage([
      { candidate: c[0], reason: 'derivls needs Python 3.10 or newer; /usr/bin/python3 is 3.8.10' },
      { candidate: c[1], reason: 'not found' },
    ]);
    assert.match(msg, /needs only a Python 3\.10 or newer/);
    assert.match(msg, /python3 -I \/ext\/bundled\/derivls_server\.py serve/);
    assert.doesNotMatch(msg, /pip install/);
  });
});

describe('versionMismatchMessage', () => {
  const env = { display: 'python3 -m derivls serve', bundled: false };
  it('is quiet when the versions match', () => {
    assert.equal(versionMismatchMessage('0.2.0', { name: 'derivls', version: '0.2.0' }, env), undefined);
  });

  it('names both versions and the way back to the bundled server', () => {
    const msg = versionMismatchMessage('0.2.0', { name: 'derivls', version: '0.1.0' }, env) ?? '';
    assert.match(msg, /python3 -m derivls serve\) is derivls 0\.1\.0, this extension is 0\.2\.0/);
    assert.match(msg, /"derivls\.importStrategy" to "useBundled"/);
  });

  it('counts a server without serverInfo.version as a mismatch', () => {
    assert.match(versionMismatchMessage('0.2.0', undefined, env) ?? '', /does not say its version/);
  });
});

describe('expandPath', () => {
  it('expands ~, ${userHome}, ${workspaceFolder} and ${env:X}', () => {
    assert.equal(expandPath('~', linux), '/home/u');
    assert.equal(expandPath('~/x/native_functions.yaml', linux), '/home/u/x/native_functions.yaml');
    assert.equal(expandPath('${userHome}/t.yaml', linux), '/home/u/t.yaml');
    assert.equal(
      expandPath('${workspaceFolder}/aten/src/ATen/native/tags.yaml', linux),
      '/src/pytorch/aten/src/ATen/native/tags.yaml',
    );
    assert.equal(expandPath('${env:VENV}/bin/derivls', linux), '/home/u/venv/bin/derivls');
    assert.equal(expandPath('${env:NOPE}x', linux), 'x');
  });

  it('resolves relative paths against the workspace folder, leaves bare names alone', () => {
    assert.equal(expandPath('aten/src/ATen/native/native_functions.yaml', linux), '/src/pytorch/aten/src/ATen/native/native_functions.yaml');
    assert.equal(expandPath('./venv/bin/python', linux), '/src/pytorch/venv/bin/python');
    assert.equal(expandPath('python3.12', linux), 'python3.12');
    assert.equal(expandPath('rel/x', { ...linux, workspaceFolder: undefined }), 'rel/x');
  });

  it('handles Windows paths', () => {
    const win: LaunchContext = { ...linux, platform: 'win32', home: 'C:\\Users\\u', workspaceFolder: 'C:\\src\\pytorch' };
    assert.equal(expandPath('~\\venv\\Scripts\\derivls.exe', win), 'C:\\Users\\u\\venv\\Scripts\\derivls.exe');
    assert.equal(expandPath('aten\\tags.yaml', win), 'C:\\src\\pytorch\\aten\\tags.yaml');
    assert.equal(expandPath('D:\\x.yaml', win), 'D:\\x.yaml');
  });
});

describe('serverSettings', () => {
  const unset = {
    nativeFunctions: '',
    tags: '',
    profile: 'auto',
    torchVersion: 'auto',
    torchInclude: '',
    functionsManual: '',
    compileOnSave: false,
    compileCxx: '',
    compileTorchInclude: '',
    gradcheckOnSave: false,
    gradcheckPython: '',
  };

  it('expands paths and sends unset ones as empty strings', () => {
    assert.deepEqual(serverSettings({ nativeFunctions: '${workspaceFolder}/n.yaml', tags: '', profile: 'legacy' }, linux), {
      ...unset,
      nativeFunctions: '/src/pytorch/n.yaml',
      profile: 'legacy',
    });
    assert.deepEqual(serverSettings({}, linux), unset);
  });

  it('reads every setting the server reads from the configuration, so each is sent (torchInclude was not)', () => {
    const asked: string[] = [];
    const configuration: Record<string, unknown> = { torchInclude: '${workspaceFolder}/torch/include', gradcheckOnSave: true };
    const get = <T>(key: string, fallback: T): T => {
      asked.push(key);
      return (key in configuration ? configuration[key] : fallback) as T;
    };
    const sent = serverSettings(readServerSettings(get), linux);
    assert.deepEqual([...asked].sort(), [...SERVER_SETTING_KEYS].sort());
    assert.deepEqual(Object.keys(sent).sort(), [...SERVER_SETTING_KEYS].sort());
    assert.deepEqual(sent, { ...unset, torchInclude: '/src/pytorch/torch/include', gradcheckOnSave: true });
  });

  it('expands torchInclude like the other paths', () => {
    assert.equal(serverSettings({ torchInclude: '${workspaceFolder}/torch/include' }, linux).torchInclude, '/src/pytorch/torch/include');
  });

  it('expands functionsManual like the other paths', () => {
    const sent = serverSettings({ functionsManual: '~/pytorch/torch/csrc/autograd/FunctionsManual.cpp' }, linux);
    assert.equal(sent.functionsManual, '/home/u/pytorch/torch/csrc/autograd/FunctionsManual.cpp');
  });

  it('sends torchVersion as set, and an empty one as auto', () => {
    assert.equal(serverSettings({ torchVersion: ' 2.4.1 ' }, linux).torchVersion, '2.4.1');
    assert.equal(serverSettings({ torchVersion: '' }, linux).torchVersion, 'auto');
    assert.equal(serverSettings({ torchVersion: 'auto' }, linux).torchVersion, 'auto');
  });

  it('sends the compile settings: the include folder expanded, a bare compiler name left for PATH', () => {
    const sent = serverSettings(
      { compileOnSave: true, compileCxx: 'clang++', compileTorchInclude: '~/venv/lib/torch/include' },
      linux,
    );
    assert.equal(sent.compileOnSave, true);
    assert.equal(sent.compileCxx, 'clang++');
    assert.equal(sent.compileTorchInclude, '/home/u/venv/lib/torch/include');
    assert.equal(serverSettings({ compileCxx: '${env:VENV}/bin/g++' }, linux).compileCxx, '/home/u/venv/bin/g++');
  });

  it('sends every derivls setting package.json declares for the server, and only those', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
      contributes: { configuration: { properties: Record<string, unknown> } };
    };
    const declared = Object.keys(manifest.contributes.configuration.properties)
      .map((k) => k.replace(/^derivls\./, ''))
      .filter((k) => !k.startsWith('server.') && k !== 'trace.server' && k !== 'importStrategy'); // how it starts: the extension's
    assert.deepEqual([...declared].sort(), [...SERVER_SETTING_KEYS].sort());
    assert.deepEqual(Object.keys(serverSettings({}, linux)).sort(), [...SERVER_SETTING_KEYS].sort());
  });

  it('falls back to auto for an unknown profile', () => {
    assert.equal(serverSettings({ profile: 'torchgen' }, linux).profile, 'torchgen');
    assert.equal(serverSettings({ profile: 'bogus' }, linux).profile, 'auto');
  });
});

describe('findExecutable', () => {
  const files = new Set(['/usr/bin/python3', '/opt/derivls/bin/derivls', 'C:\\Py\\python.EXE']);
  const exists = (p: string) => files.has(p);

  it('searches PATH for bare names', () => {
    assert.equal(findExecutable('python3', linux, exists), '/usr/bin/python3');
    assert.equal(findExecutable('derivls', linux, exists), undefined);
  });

  it('takes names with a separator as paths', () => {
    assert.equal(findExecutable('/opt/derivls/bin/derivls', linux, exists), '/opt/derivls/bin/derivls');
    assert.equal(findExecutable('bin/python3', linux, exists), undefined);
  });

  it('tries PATHEXT on Windows', () => {
    const win = { platform: 'win32' as const, env: { Path: 'C:\\Windows;C:\\Py', PATHEXT: '.COM;.EXE' } };
    assert.equal(findExecutable('python', win, exists), 'C:\\Py\\python.EXE');
  });
});

describe('noServerMessage', () => {
  it('names what was tried and how to fix it', () => {
    const msg = noServerMessage([
      { candidate: serverCandidates({}, linux)[0], reason: "No module named 'derivls'" },
      { candidate: serverCandidates({}, linux)[1], reason: 'not found' },
    ]);
    assert.match(msg, /python3 -m derivls serve/);
    assert.match(msg, /No module named 'derivls'/);
    assert.match(msg, /derivls\.server\.python/);
    assert.match(msg, /pip install \/path\/to\/derivls/);
    assert.doesNotMatch(msg, /pip install derivls/); // not on the package index yet
  });

  it('points at derivls.server.path when that was set', () => {
    const msg = noServerMessage([{ candidate: serverCandidates({ path: '/nope/derivls' }, linux)[0], reason: 'not found' }]);
    assert.match(msg, /\/nope\/derivls serve/);
    assert.match(msg, /point "derivls\.server\.path"/);
  });
});

describe('isDerivlsFile', () => {
  it('matches only the two file names', () => {
    assert.ok(isDerivlsFile('/src/pytorch/tools/autograd/derivatives.yaml'));
    assert.ok(isDerivlsFile('C:\\pt\\aten\\src\\ATen\\native\\native_functions.yaml'));
    assert.ok(!isDerivlsFile('/src/pytorch/.github/workflows/ci.yaml'));
    assert.ok(!isDerivlsFile('/x/my_derivatives.yaml'));
    assert.ok(!isDerivlsFile('/x/derivatives.yml'));
  });
});

describe('entryLineAt', () => {
  const lines = [
    '# comment',
    '- name: abs(Tensor self) -> Tensor',
    '  self: grad * self.sgn()',
    '  result: handle_r_to_c(result.scalar_type(), self_t.conj() * self_p.sgn())',
    '',
    '- name: acos(Tensor self) -> Tensor',
    '  self: grad * -((-self * self + 1).rsqrt()).conj()',
  ];

  it('finds the - name: line above the cursor', () => {
    assert.equal(entryLineAt(lines, 1), 1);
    assert.equal(entryLineAt(lines, 3), 1);
    assert.equal(entryLineAt(lines, 4), 1);
    assert.equal(entryLineAt(lines, 6), 5);
  });

  it('returns undefined outside entries', () => {
    assert.equal(entryLineAt(lines, 0), undefined);
    assert.equal(entryLineAt(lines, 99), undefined);
    assert.equal(entryLineAt(['- func: abs(Tensor self) -> Tensor', '  variants: function'], 1), undefined);
  });
});

describe('chooseServer', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'derivls-vscode-test-'));
  const ctx = { platform: process.platform, env: { PATH: `${tmp}${path.delimiter}${path.dirname(process.execPath)}` } };
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('skips a candidate whose probe fails and takes the next', async () => {
    const node = process.execPath;
    const result = await chooseServer(
      [
        { command: node, args: ['x'], origin: 'default python', probe: { command: node, args: ['-e', 'process.exit(3)'] }, display: 'x' },
        { command: node, args: ['y'], origin: 'PATH', probe: { command: node, args: ['-e', ''] }, display: 'y' },
      ],
      ctx,
    );
    assert.equal(result.failures.length, 1);
    assert.equal(result.chosen?.origin, 'PATH');
    assert.deepEqual(result.chosen?.args, ['y']);
  });

  it('reports the probe error text and missing executables', { skip: process.platform === 'win32' }, async () => {
    const result = await chooseServer(
      [
        {
          command: process.execPath,
          args: [],
          origin: 'derivls.server.python',
          probe: { command: process.execPath, args: ['-e', 'console.error("No module named derivls"); process.exit(1)'] },
          display: 'node',
        },
        { command: path.join(tmp, 'missing-derivls'), args: ['serve'], origin: 'PATH', display: 'missing-derivls serve' },
      ],
      ctx,
    );
    assert.equal(result.chosen, undefined);
    assert.equal(result.failures[0].reason, 'No module named derivls');
    assert.equal(result.failures[1].reason, 'not found');
  });

  it('finds an executable on PATH and returns its full path', { skip: process.platform === 'win32' }, async () => {
    const exe = path.join(tmp, 'derivls');
    fs.writeFileSync(exe, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    const result = await chooseServer([{ command: 'derivls', args: ['serve'], origin: 'PATH', display: 'derivls serve' }], ctx);
    assert.equal(result.chosen?.command, exe);
  });

  it('runs the probe in the neutral working directory, never the workspace', async () => {
    const neutral = fs.mkdtempSync(path.join(tmp, 'neutral-'));
    const node = process.execPath;
    const probe = `process.exit(require('fs').realpathSync(process.cwd()) === ${JSON.stringify(fs.realpathSync(neutral))} ? 0 : 7)`;
    const candidate: ServerCandidate = {
      command: node,
      args: [],
      origin: 'default python',
      probe: { command: node, args: ['-e', probe] },
      display: 'node',
    };
    assert.equal((await chooseServer([candidate], { ...ctx, neutralCwd: neutral })).chosen?.command, node);
    assert.equal((await chooseServer([candidate], ctx)).chosen, undefined);
  });
});

/** python3 (or python) on PATH, for the tests that run the bootstrap code for real. */
function findPython(): string | undefined {
  const ctx = { platform: process.platform, env: process.env };
  for (const name of ['python3', 'python']) {
    const found = findExecutable(name, ctx, (p) => {
      try {
        fs.accessSync(p, fs.constants.X_OK);
        return fs.statSync(p).isFile();
      } catch {
        return false;
      }
    });
    if (found !== undefined) {
      return found;
    }
  }
  return undefined;
}

describe('the Python launch never imports from the working directory', () => {
  const python = findPython();
  const shadow = fs.mkdtempSync(path.join(os.tmpdir(), 'derivls-shadow-'));
  after(() => fs.rmSync(shadow, { recursive: true, force: true }));
  const marker = path.join(shadow, 'MARKER');
  for (const mod of ['derivls', 'yaml', 'pygls', 'lsprotocol', 'json', 'asyncio', 'runpy']) {
    fs.mkdirSync(path.join(shadow, mod));
    fs.writeFileSync(
      path.join(shadow, mod, '__init__.py'),
      `open(${JSON.stringify(marker)}, 'a').write(${JSON.stringify(mod + '\n')})\nraise SystemExit(42)\n`,
    );
  }

  it('every Python candidate boots with the safe sys.path', () => {
    for (const c of serverCandidates({ python: '/usr/bin/python3' }, linux).concat(serverCandidates({}, linux))) {
      if (c.probe !== undefined) {
        assert.equal(c.args[0], '-c');
        assert.ok(c.args[1].startsWith(SAFE_PATH), c.args[1]);
        assert.ok(c.probe.args[1].startsWith(SAFE_PATH), c.probe.args[1]);
      }
    }
  });

  it('a workspace shadowing derivls, yaml, pygls, lsprotocol, json, asyncio and runpy runs nothing', { skip: python === undefined }, () => {
    // The launch code with `import derivls` replaced by the shadowed modules; run in the shadowing folder.
    const code = `${SAFE_PATH}; import json, asyncio, runpy\nfor m in ('derivls', 'yaml', 'pygls', 'lsprotocol'):\n  try: __import__(m)\n  except ImportError: pass\nprint('ok')`;
    const out = execFileSync(python as string, ['-c', code], { cwd: shadow, encoding: 'utf8' });
    assert.equal(out.trim(), 'ok');
    assert.equal(fs.existsSync(marker), false, fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : '');
    // Without SAFE_PATH the same folder does run its code (the test can fail).
    assert.throws(() => execFileSync(python as string, ['-c', 'import json'], { cwd: shadow, stdio: 'ignore' }));
    assert.equal(fs.readFileSync(marker, 'utf8'), 'json\n');
    fs.rmSync(marker);
  });
});
