// One PostgreSQL and one `next start` for all files, which run one at a time: the Next.js
// examples' shared configuration.
export { default } from "../../tools/examples/vitest-config";
