import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.demo-data/**', '.stryker-tmp/**', 'reports/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-constant-condition': ['error', { checkLoops: false }],
      eqeqeq: ['error', 'always'],
    },
  },
  {
    // The explorer page's browser modules: TypeScript checks their names against the DOM
    // (src/explore/page/tsconfig.json, part of npm run typecheck); their .d.ts are generated.
    files: ['src/explore/page/**/*.js'],
    rules: { 'no-undef': 'off' },
  },
  { ignores: ['src/explore/page/**/*.d.ts'] },
);
