// ESLint: typescript-eslint's type-aware preset (recommendedTypeChecked) over the TypeScript sources, the scripts and
// the dashboard (web/: browser JS modules, type-checked through web/tsconfig.json with // @ts-check + JSDoc).
// Rules turned off or narrowed below say why on their line (docs/decisions.md, decision 146).
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const unsafeAnyOff = {
  '@typescript-eslint/no-unsafe-argument': 'off',
  '@typescript-eslint/no-unsafe-assignment': 'off',
  '@typescript-eslint/no-unsafe-call': 'off',
  '@typescript-eslint/no-unsafe-member-access': 'off',
  '@typescript-eslint/no-unsafe-return': 'off',
};

export default tseslint.config(
  { ignores: ['node_modules/**', 'data/**', 'dist/**', 'public/**'] },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['scripts/*.mjs', 'bin/*.mjs'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // any is written on purpose where a library is untyped; the no-unsafe-* rules police where it flows.
      '@typescript-eslint/no-explicit-any': 'off',
      // node:test's describe/it return promises the runner itself awaits.
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'suite'] },
          ],
        },
      ],
      // Passing on a caught error or an AbortSignal's reason as it came (unknown / any) is right; new reasons are Errors.
      '@typescript-eslint/prefer-promise-reject-errors': [
        'error',
        { allowThrowingAny: true, allowThrowingUnknown: true },
      ],
      // async without await is deliberate here: Fastify handlers and Promise-returning interface methods must reject,
      // not throw synchronously, when their body throws.
      '@typescript-eslint/require-await': 'off',
      'no-console': 'off',
    },
  },
  {
    // Tests read the services' JSON answers as any and assert on them: the assertion is the type check.
    files: ['test/**', ...['test', 'harness', 'fixture', 'fake', 'kit', 'contract'].map((r) => `src/**/*.${r}.ts`)],
    rules: unsafeAnyOff,
  },
  {
    files: ['web/**/*.js'],
    ...js.configs.recommended,
    languageOptions: { globals: globals.browser },
  },
  { files: ['web/poll-worker.js'], languageOptions: { globals: globals.worker } },
  { files: ['scripts/**/*.mjs', 'bin/**/*.mjs'], languageOptions: { globals: globals.node } },
);
