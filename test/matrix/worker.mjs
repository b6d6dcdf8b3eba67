// workerd entry of the matrix case script: any request answers with the results as JSON.
import { runCases } from './cases.mjs';

export default {
  async fetch() {
    return Response.json(await runCases());
  },
};
