import { ApiProperty } from '@nestjs/swagger';

/** A key as listed: never the secret. */
export class KeyDto {
  @ApiProperty({ format: 'uuid', example: '0b6f3c1e-5d2a-4f7e-9c1b-2a3d4e5f6a7b' })
  id!: string;

  @ApiProperty({ description: 'The visible start of the key, to recognise it.', example: 'mgw_Ab3dE6gH' })
  prefix!: string;

  @ApiProperty({ example: 'team-video' })
  owner!: string;

  @ApiProperty({ example: 'render-pipeline' })
  name!: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T10:00:00.000Z' })
  created_at!: string;

  @ApiProperty({ format: 'date-time', nullable: true, type: String, example: null })
  last_used_at!: string | null;

  @ApiProperty({ format: 'date-time', nullable: true, type: String, example: null })
  revoked_at!: string | null;
}

/** The answer to creating a key: the only time the plaintext key is shown. */
export class CreatedKeyDto {
  @ApiProperty({ format: 'uuid', example: '0b6f3c1e-5d2a-4f7e-9c1b-2a3d4e5f6a7b' })
  id!: string;

  @ApiProperty({ description: 'The API key. Shown only now; store it safely.', example: 'mgw_Ab3dE6gHk9LmN0pQr5StU8vWx1Yz2Ab3Cd4Ef5Gh6Ij7Kl8M' })
  key!: string;

  @ApiProperty({ example: 'mgw_Ab3dE6gH' })
  prefix!: string;

  @ApiProperty({ example: 'team-video' })
  owner!: string;

  @ApiProperty({ example: 'render-pipeline' })
  name!: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T10:00:00.000Z' })
  created_at!: string;
}
