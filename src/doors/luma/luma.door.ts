/** The Luma door's name, as the tasks of an operation with several doors store it (`params.door`). */
export const LUMA_DOOR = 'luma';
