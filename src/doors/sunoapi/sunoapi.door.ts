/** The sunoapi.org-shaped door's name (the family sunoapi.org, api.box, kie.ai; under `/sunoapi/api/v1`), as its music tasks store it. */
export const SUNOAPI_DOOR = 'sunoapi';
