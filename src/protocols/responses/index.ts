// OpenAI's Responses API (POST /v1/responses): decode the body, gather its
// text, translate it to and from a chat-completions backend (JSON or stream),
// read a native backend, and keep the items of stored turns.
export { parseResponsesRequest } from './request';
export { responsesTexts, itemTexts } from './texts';
export { toChat, type ToChatOptions, type ChatTranslation } from './to-chat';
export { fromChatJson } from './from-chat';
export { ResponsesStream } from './stream';
export { ResponsesObserver, usageOfJson } from './native';
export { inputItems, historyItems, inputItemsPage, parseInputItemsQuery, type StoredItem, type InputItemsQuery, type InputItemsList } from './items';
export { newResponseId } from './output';
export type { HostedTools } from './tools';
export type * from './types';
