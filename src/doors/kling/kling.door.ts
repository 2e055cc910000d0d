/** The Kling door's name, as the tasks of an operation with several doors store it (`params.door`). */
export const KLING_DOOR = 'kling';
