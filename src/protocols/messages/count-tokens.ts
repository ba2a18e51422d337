// POST /v1/messages/count_tokens on a backend that does not serve Messages:
// an estimate from the request's texts, at about four characters a token as
// the gateway estimates everywhere. Images, documents' encoded sources and
// redacted thinking are not counted.
//
//   res.json(countTokens(parseCountTokensRequest(body)));
import { estimateTokens, promptChars } from '../../request/usage';
import type { CountTokensRequest } from './request';
import { messagesTexts } from './texts';

export function countTokens(req: CountTokensRequest): { input_tokens: number } {
  const texts: string[] = [];
  messagesTexts(req, texts);
  return { input_tokens: estimateTokens(promptChars({ texts })) };
}
